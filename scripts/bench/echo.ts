// The echoes the bench holds rows to, each a child process answering fixed replies: the
// node:http echo (what any server must do: read and parse the request, write the bytes) and
// the framework's floor (the same replies from bare Hono on @hono/node-server).
import { spawn } from 'node:child_process';
import { ROOT } from '../lib/specs.ts';
import { freePort } from './lib.ts';

// The echo: parses a JSON request body like the server must, answers the captured bytes.
const ECHO = `
const http = require('node:http');
const replies = JSON.parse(process.env.REPLIES);
http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    if (chunks.length) JSON.parse(Buffer.concat(chunks).toString());
    const r = replies[req.method + ' ' + req.url.split('?')[0]] ?? { status: 404, body: '{}' };
    res.writeHead(r.status, { 'content-type': 'application/json' });
    res.end(r.body);
  });
}).listen(Number(process.env.PORT), '127.0.0.1', () => process.stdout.write('ready\\n'));
`;

// The framework's floor: the same replies from Hono on @hono/node-server, as the server is
// served, each route registered as the contract's are and the body read and parsed as the
// server reads it: what the framework alone costs, between the echo and the server.
const HONO_ECHO = `
import { Hono } from 'hono';
import { serve } from '@hono/node-server';
const replies = JSON.parse(process.env.REPLIES);
const app = new Hono();
for (const [route, r] of Object.entries(replies)) {
  const [method, path] = route.split(' ');
  app.on(method, [path], async (c) => {
    if (c.req.header('content-length')) JSON.parse(await c.req.raw.text());
    return new Response(r.body, { status: r.status, headers: { 'content-type': 'application/json', 'x-request-id': 'req_01M96PCP1EFPG104ZHFK0M2DMW' } });
  });
}
serve({ fetch: app.fetch, port: Number(process.env.PORT), hostname: '127.0.0.1' }, () => process.stdout.write('ready\\n'));
`;

export type Replies = Record<string, { status: number; body: string }>;

/** The echo (node:http), or with `hono` the framework's floor, answering `replies`. */
export async function startEcho(replies: Replies, hono = false): Promise<{ url: string; pid: number | undefined; stop(): void }> {
  const port = await freePort();
  const args = hono ? ['--input-type=module', '-e', HONO_ECHO] : ['-e', ECHO];
  // cwd: the repository, whose node_modules the framework floor's imports resolve from.
  const child = spawn(process.execPath, args, { cwd: ROOT, env: { ...process.env, PORT: String(port), REPLIES: JSON.stringify(replies) }, stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
  return { url: `http://127.0.0.1:${port}`, pid: child.pid, stop: () => child.kill('SIGTERM') };
}
