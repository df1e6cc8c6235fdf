import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { until } from '../../testing/until.ts';
import { fetchOnNewConnection } from './one-shot-fetch.ts';

let server: Server;
let url: string;
let connections = 0;
let open = 0;

beforeAll(async () => {
  // A keep-alive longer than the test: a socket left open by the client stays open.
  server = createServer({ keepAliveTimeout: 60_000 }, (_req, res) => res.end('ok'));
  server.on('connection', (socket) => {
    connections += 1;
    open += 1;
    socket.once('close', () => (open -= 1));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

it('each probe has a connection of its own, closed once answered (no idle keep-alive socket to race)', async () => {
  for (let i = 0; i < 3; i += 1) {
    const r = await fetchOnNewConnection(url);
    expect(r.headers.get('connection')).toBe('close');
    expect(await r.text()).toBe('ok');
    await until(() => open === 0, () => `the probe's connection closed (${open} open)`, 2_000);
  }
  expect(connections).toBe(3);
});
