// Several instances behind one PostgreSQL database: two server processes share the store and
// the delivery queue. Every event is delivered; no delivery is sent twice while both live;
// after one is killed with SIGKILL, the deliveries it held are finished by the other.
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createManagementClient, createOrdersClient } from '../../client/api.ts';
import { loadConfig } from '../config.ts';
import { createTenant, type CreatedTenant } from '../domain/admin.ts';
import { openServices } from '../services.ts';
import { createTestDatabase } from '../store/postgres/testing.ts';
import { startServer, type RunningServer } from '../testing/child-server.ts';

const PHASE_ONE = 2000;
const PHASE_TWO = 1000;

const received = new Map<string, number>();
let delayMs = 0;
let receiver: Server;
let hookUrl = '';
let db: { url: string; drop(): Promise<void> };
let env: NodeJS.ProcessEnv;
let tenant: CreatedTenant;
const servers: RunningServer[] = [];

async function until(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what} (received ${received.size})`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function produce(from: number, count: number): Promise<void> {
  const clients = servers.map((s) => createOrdersClient({ baseUrl: s.url, apiKey: tenant.apiKey, apiHash: tenant.apiHash }));
  let next = from;
  await Promise.all(
    Array.from({ length: 16 }, async (_, p) => {
      while (next < from + count) {
        const i = next++;
        const r = await clients[(i + p) % clients.length]!.POST('/v2/orders', { body: { merchantReference: `multi-${i}`, amountMinor: 100 } });
        if (r.response.status !== 201) throw new Error(`order ${i}: ${r.response.status}`);
      }
    }),
  );
}

async function feedIds(url: string): Promise<string[]> {
  const orders = createOrdersClient({ baseUrl: url, apiKey: tenant.apiKey, apiHash: tenant.apiHash });
  const ids: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await orders.GET('/v2/events', { params: { query: { limit: 100, ...(cursor ? { cursor } : {}) } } });
    if (!page.data) throw new Error(`events feed: ${page.response.status}`);
    ids.push(...page.data.data.map((e) => e.id));
    cursor = page.data.nextCursor ?? undefined;
  } while (cursor);
  return ids;
}

beforeAll(async () => {
  receiver = createServer((req, res) => {
    const id = req.headers['service-event-id'];
    req.resume();
    req.on('end', () => {
      setTimeout(() => {
        if (typeof id === 'string') received.set(id, (received.get(id) ?? 0) + 1);
        res.writeHead(204).end();
      }, delayMs);
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', () => resolve()));
  hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;

  db = await createTestDatabase();
  env = {
    NODE_ENV: 'test',
    DATABASE_URL: db.url,
    SECRETS_KEY: randomBytes(32).toString('base64url'),
    WEBHOOK_ALLOW_INSECURE_URLS: 'true',
    RATE_LIMIT_RPS: '0',
    VALIDATE_RESPONSES: 'false',
  };
  // Provision the tenant in-process, as the admin tool would.
  const { services } = await openServices(loadConfig(env), pino({ level: 'silent' }));
  tenant = await createTenant(services, { name: 'Two instances' });
  await services.store.close();
  // Both instances start together: migrations are applied once, under the advisory lock.
  servers.push(...(await Promise.all([startServer({ env }), startServer({ env })])));
}, 120_000);

afterAll(async () => {
  for (const s of servers) s.child.kill('SIGKILL');
  await new Promise<void>((resolve) => receiver.close(() => resolve()));
  await new Promise((r) => setTimeout(r, 200));
  await db?.drop();
});

describe('two instances on one PostgreSQL database', () => {
  it('delivers every event exactly once while both instances live', async () => {
    const management = createManagementClient({ baseUrl: servers[0]!.url, memberToken: tenant.memberToken });
    const created = await management.POST('/v2/webhooks/endpoints', { body: { url: hookUrl } });
    expect(created.response.status).toBe(201);

    await produce(0, PHASE_ONE);
    await until(() => received.size >= PHASE_ONE, 120_000, `${PHASE_ONE} deliveries`);
    await new Promise((r) => setTimeout(r, 500)); // a late duplicate would show up here
    const ids = await feedIds(servers[1]!.url);
    expect(ids).toHaveLength(PHASE_ONE);
    expect(ids.filter((id) => !received.has(id))).toEqual([]);
    const duplicates = [...received.values()].filter((n) => n > 1).length;
    console.log(`two instances: produced ${PHASE_ONE}, received ${received.size} distinct, duplicates ${duplicates}`);
    expect(duplicates).toBe(0);
  }, 180_000);

  it('finishes the deliveries of an instance killed with SIGKILL on the other', async () => {
    delayMs = 50; // keep deliveries in flight, so the killed instance holds leases
    const before = received.size;
    await produce(PHASE_ONE, PHASE_TWO);
    await until(() => received.size >= before + PHASE_TWO / 4, 60_000, 'deliveries in flight');
    const [victim, survivor] = servers as [RunningServer, RunningServer];
    victim.child.kill('SIGKILL');
    await new Promise((r) => victim.child.once('exit', r));

    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    const leased = await client.query<{ id: string }>(
      "SELECT d.id FROM deliveries d JOIN delivery_leases l ON l.delivery_seq = d.seq WHERE d.state = 'pending' AND l.expires_at > $1",
      [Date.now()],
    );
    // Leases of the dead instance expire (30 s by default); the survivor then finishes them.
    // Their events may already have reached the receiver before the kill (the answer was
    // lost with the process), so wait for the deliveries themselves, not only the receipts.
    await until(() => received.size >= PHASE_ONE + PHASE_TWO, 150_000, 'all events after the kill');
    const leasedIds = leased.rows.map((r) => r.id);
    const undelivered = async (): Promise<number> =>
      Number((await client.query<{ n: string }>("SELECT COUNT(*) AS n FROM deliveries WHERE id = ANY($1) AND state <> 'delivered'", [leasedIds])).rows[0]?.n ?? 0);
    const deadline = Date.now() + 90_000;
    while ((await undelivered()) > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 250));
    const states = await client.query<{ state: string; n: string }>('SELECT state, COUNT(*) AS n FROM deliveries WHERE id = ANY($1) GROUP BY state', [leasedIds]);
    await client.end();
    const ids = await feedIds(survivor.url);
    expect(ids).toHaveLength(PHASE_ONE + PHASE_TWO);
    expect(ids.filter((id) => !received.has(id))).toEqual([]);
    expect(states.rows.filter((r) => r.state !== 'delivered')).toEqual([]);
    const duplicates = [...received.values()].filter((n) => n > 1).length;
    console.log(
      `after kill -9: produced ${PHASE_ONE + PHASE_TWO} in all, ${leased.rows.length} leased at the kill, all delivered; received ${received.size} distinct, duplicates ${duplicates}`,
    );
  }, 240_000);
});
