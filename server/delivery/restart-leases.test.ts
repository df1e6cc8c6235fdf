// Crash recovery on the embedded store: the server is killed with SIGKILL while every delivery
// is in flight (the receiver holds its answers), and the restarted server sends them again at
// once. The leases the dead process left are stretched to an hour before the restart, so the
// deliveries can only go out within the test's wait because the restart gave them back
// (queue.releaseOrphaned), never because a lease expired.
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { createManagementClient, createOrdersClient } from '../../client/api.ts';
import { startServer, type RunningServer } from '../testing/child-server.ts';
import { until } from '../../testing/until.ts';
import { DEFAULT_PER_ENDPOINT_LIMIT } from './worker/limits.ts';

const ORDERS = 12;
const LEASE_STRETCH_MS = 3_600_000;

let receiver: Server | null = null;
let server: RunningServer | null = null;
/** Event ids seen before the kill (held, never answered) and after the restart (answered). */
const before = new Set<string>();
const after = new Set<string>();
let holding = true;
const held: ServerResponse[] = [];

async function startReceiver(): Promise<string> {
  receiver = createServer((req, res) => {
    const id = req.headers['service-event-id'];
    req.resume();
    req.on('end', () => {
      if (typeof id === 'string') (holding ? before : after).add(id);
      if (holding) held.push(res);
      else res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver?.listen(0, '127.0.0.1', () => resolve()));
  return `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
}

afterAll(async () => {
  server?.child.kill('SIGKILL');
  for (const res of held) res.destroy();
  receiver?.closeAllConnections();
  await new Promise<void>((resolve) => (receiver ? receiver.close(() => resolve()) : resolve()));
});

describe('restart after kill -9 (SQLite)', () => {
  it('sends the deliveries that were in flight at once, without waiting for their leases', async () => {
    const hookUrl = await startReceiver();
    const env = { NODE_ENV: 'test', WEBHOOK_ALLOW_INSECURE_URLS: 'true', RATE_LIMIT_RPS: '0', VALIDATE_RESPONSES: 'false' };
    server = await startServer({ env });
    const tenant = server.tenant;
    if (!tenant) throw new Error('no demo tenant');
    const management = createManagementClient({ baseUrl: server.url, memberToken: tenant.memberToken });
    expect((await management.POST('/v2/webhooks/endpoints', { body: { url: hookUrl } })).response.status).toBe(201);
    const orders = createOrdersClient({ baseUrl: server.url, apiKey: tenant.apiKey, apiHash: tenant.apiHash });
    for (let i = 0; i < ORDERS; i++) {
      const r = await orders.POST('/v2/orders', { body: { merchantReference: `restart-${i}`, amountMinor: 100 + i } });
      expect(r.response.status).toBe(201);
    }
    // As many as the endpoint's limit are on the wire, their answers held; the others wait
    // prefetched: all are leased by the process we kill.
    const onWire = Math.min(ORDERS, DEFAULT_PER_ENDPOINT_LIMIT);
    await until(() => before.size === onWire, `${onWire} deliveries in flight`, 30_000);
    const dataDir = server.dataDir;
    server.child.kill('SIGKILL');
    await new Promise((r) => server?.child.once('exit', r));
    server = null;

    const db = new Database(path.join(dataDir, 'payments.db'));
    const stretched = db.prepare('UPDATE delivery_leases SET expires_at = ?').run(Date.now() + LEASE_STRETCH_MS).changes;
    db.close();
    expect(stretched).toBeGreaterThanOrEqual(onWire);

    holding = false;
    const restartedAt = Date.now();
    server = await startServer({ env, dataDir });
    const readyAt = Date.now();
    await until(() => after.size === ORDERS, 'the in-flight deliveries after the restart', 60_000);
    const doneAt = Date.now();
    expect([...before].every((id) => after.has(id))).toBe(true);
    console.log(`restart: ${ORDERS} in-flight deliveries received ${doneAt - readyAt} ms after the server was ready (${doneAt - restartedAt} ms after the restart began); ${stretched} leases had ${LEASE_STRETCH_MS / 1000} s left`);

    const check = new Database(path.join(dataDir, 'payments.db'), { readonly: true });
    try {
      await until(() => (check.prepare("SELECT count(*) AS n FROM deliveries WHERE state = 'delivered'").get() as { n: number }).n === ORDERS, 'the deliveries recorded as delivered', 30_000);
    } finally {
      check.close();
    }
    await server.stop();
    server = null;
  }, 120_000);
});
