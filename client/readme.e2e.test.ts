// The README's quick start as a merchant meets it: the package packed with plain `npm pack`
// (its prepack builds), installed into an empty `npm init -y` folder outside the repository
// (CommonJS by default), and each receiver of the README saved under the name its first line
// gives and run with node as written. A webhook signed with the secret is answered 200 and
// printed; a forged one 400.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { generateSecret, generateTestHeaders } from './webhooks/index.ts';

const CLIENT = import.meta.dirname;
const cleanEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k) && k !== 'NODE_PATH' && k !== 'INIT_CWD'));

function exec(cmd: string, args: string[], cwd: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd, env: cleanEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`${cmd} ${args.join(' ')} exited ${code}\n${out}`))));
  });
}

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const { port } = s.address() as AddressInfo;
  await new Promise((r) => s.close(r));
  return port;
}

/** The README's receivers: each ```js block whose first line is `// <file name>`. */
async function snippets(): Promise<Array<{ file: string; code: string }>> {
  const readme = await readFile(path.join(CLIENT, 'README.md'), 'utf8');
  return [...readme.matchAll(/```js\n(\/\/ (receiver\.m?js)\n[\s\S]*?)```/g)].map((m) => ({ file: m[2]!, code: m[1]! }));
}

let folder: string;
beforeAll(async () => {
  folder = await mkdtemp(path.join(os.tmpdir(), 'readme-quickstart-'));
  await exec('npm', ['pack', '--pack-destination', folder], CLIENT);
  const tarball = (await readdir(folder)).find((f) => f.endsWith('.tgz'))!;
  await exec('npm', ['init', '-y'], folder);
  await exec('npm', ['install', '--no-audit', '--no-fund', path.join(folder, tarball)], folder);
}, 240_000);
afterAll(async () => {
  if (folder) await rm(folder, { recursive: true, force: true });
});

it('the README has a CommonJS and an ESM receiver', async () => {
  expect((await snippets()).map((s) => s.file)).toEqual(['receiver.js', 'receiver.mjs']);
  // npm init -y made a CommonJS package: receiver.js runs as CommonJS.
  expect(JSON.parse(await readFile(path.join(folder, 'package.json'), 'utf8')).type ?? 'commonjs').toBe('commonjs');
});

it('the installed command checks trigger data against the event schema it ships (nothing is sent)', async () => {
  const run = exec('npx', ['payments-webhooks', 'trigger', 'order.created', '--set', 'data.amountMinor=12.5', '--api-key', 'pk_test_x', '--api-secret', 's'], folder);
  await expect(run).rejects.toThrow(/exited 1\n.*data\/amountMinor Instance type "number" is invalid\. Expected "integer"\./);
});

it.each(['receiver.js', 'receiver.mjs'])('%s, pasted into the npm init -y folder, verifies a signed webhook and refuses a forged one', async (file) => {
  const { code } = (await snippets()).find((s) => s.file === file)!;
  await writeFile(path.join(folder, file), code);
  const secret = generateSecret();
  const port = await freePort();
  const child: ChildProcess = spawn(process.execPath, [file], { cwd: folder, env: { ...cleanEnv, WEBHOOK_SECRET: secret, PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const printed = (re: RegExp): Promise<void> =>
    new Promise((resolve, reject) => {
      const check = (): void => {
        if (re.test(out)) resolve();
      };
      child.stdout!.on('data', (c: Buffer) => {
        out += c.toString();
        check();
      });
      child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
      child.once('exit', (c) => reject(new Error(`${file} exited ${c}:\n${out}`)));
      check();
    });
  try {
    await printed(/Listening on http:\/\/localhost:\d+\/webhooks/);
    const id = 'a1'.repeat(32);
    const body = JSON.stringify({ id, type: 'webhook.test', apiVersion: 'v2', createdAt: '2026-11-27T10:00:00.000Z', data: { environment: 'test' } });
    const url = `http://127.0.0.1:${port}/webhooks`;
    const ok = await fetch(url, { method: 'POST', headers: generateTestHeaders({ secret, payload: body }), body });
    expect(ok.status).toBe(200);
    await printed(new RegExp(`webhook\\.test ${id}`));
    const forged = await fetch(url, { method: 'POST', headers: generateTestHeaders({ secret: generateSecret(), payload: body }), body });
    expect(forged.status).toBe(400);
  } finally {
    child.kill('SIGTERM');
  }
});
