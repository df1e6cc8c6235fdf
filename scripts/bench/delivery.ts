// npm run bench:delivery [-- --events N --store sqlite|postgres --instances N]: produces N
// order events through the API against a loopback receiver and reports deliveries per second
// and p50/p99 from event creation to receipt, beside the raw floor measured in the same run:
// the same POSTs sent straight to the receiver with undici, no store.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { Agent, request } from 'undici';
import { createManagementClient, createOrdersClient } from '../../client/api.ts';
import { machine, startServer, type RunningServer } from './lib.ts';
import { checkSettings, positiveIntSetting } from '../lib/settings.ts';

const { values } = parseArgs({
  options: {
    events: { type: 'string', default: '2000' },
    store: { type: 'string', default: 'sqlite' },
    instances: { type: 'string', default: '1' },
    producers: { type: 'string', default: '16' },
  },
});
const EVENTS = checkSettings('bench:delivery', () => positiveIntSetting('--events', values.events));
const INSTANCES = checkSettings('bench:delivery', () => positiveIntSetting('--instances', values.instances));
const store = values.store === 'postgres' ? 'postgres' : 'sqlite';
if (store === 'sqlite' && INSTANCES > 1) throw new Error('several instances need --store postgres');

const percentile = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
};

interface Receipt {
  at: number;
  createdAt: number;
}

function startReceiver(onReceipt: (id: string, body: string) => void): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      onReceipt(String(req.headers['service-event-id'] ?? ''), Buffer.concat(chunks).toString());
      res.writeHead(204).end();
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`, server })));
}

async function rawFloor(url: string, n: number, concurrency: number): Promise<{ rps: number; p50: number; p99: number }> {
  const agent = new Agent({ connections: concurrency });
  const body = JSON.stringify({ id: 'x'.repeat(64), type: 'order.created', apiVersion: 'v2', createdAt: new Date().toISOString(), data: { orderId: 'o', merchantReference: 'r', amountMinor: 1, currency: 'USD', status: 'open' } });
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next++ < n) {
        const t0 = performance.now();
        const r = await request(url, { method: 'POST', body, headers: { 'content-type': 'application/json', 'service-event-id': 'floor' }, dispatcher: agent });
        await r.body.dump();
        latencies.push(performance.now() - t0);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  await agent.close();
  return { rps: Math.round(n / seconds), p50: percentile(latencies, 50), p99: percentile(latencies, 99) };
}

const receipts = new Map<string, Receipt>();
let floorPhase = true;
const receiver = await startReceiver((id, body) => {
  if (floorPhase || receipts.has(id)) return;
  const createdAt = Date.parse((JSON.parse(body) as { createdAt: string }).createdAt);
  receipts.set(id, { at: Date.now(), createdAt });
});

const db = store === 'postgres' ? await (await import('../../server/store/postgres/testing.ts')).createTestDatabase() : null;
const env = {
  NODE_ENV: 'test',
  WEBHOOK_ALLOW_INSECURE_URLS: 'true',
  RATE_LIMIT_RPS: '0',
  VALIDATE_RESPONSES: 'false',
  ...(db ? { DATABASE_URL: db.url, SECRETS_KEY: Buffer.alloc(32, 7).toString('base64url') } : {}),
};
const servers: RunningServer[] = [];
try {
  const floor = await rawFloor(receiver.url, EVENTS, 4 * INSTANCES);
  floorPhase = false;

  for (let i = 0; i < INSTANCES; i++) servers.push(await startServer({ env }));
  // The first instance's demo tenant (SQLite); with PostgreSQL only a fresh data folder prints one.
  const first = servers[0]!;
  let tenant = first.tenant;
  if (!tenant) {
    const { createTenantViaAdmin } = await import('./admin.ts');
    tenant = await createTenantViaAdmin(env);
  }
  const management = createManagementClient({ baseUrl: first.url, memberToken: tenant.memberToken });
  const endpoint = await management.POST('/v2/webhooks/endpoints', { body: { url: receiver.url } });
  if (endpoint.response.status !== 201) throw new Error(`endpoint: ${endpoint.response.status}`);

  const clients = servers.map((s) => createOrdersClient({ baseUrl: s.url, apiKey: tenant.apiKey, apiHash: tenant.apiHash }));
  let next = 0;
  const started = Date.now();
  await Promise.all(
    Array.from({ length: Number(values.producers) }, async (_, p) => {
      while (next < EVENTS) {
        const i = next++;
        const r = await clients[(i + p) % clients.length]!.POST('/v2/orders', { body: { merchantReference: `bench-${i}`, amountMinor: 100 } });
        if (r.response.status !== 201) throw new Error(`order ${i}: ${r.response.status}`);
      }
    }),
  );
  const produced = Date.now();
  while (receipts.size < EVENTS) {
    if (Date.now() - produced > 300_000) throw new Error(`only ${receipts.size} of ${EVENTS} delivered`);
    await new Promise((r) => setTimeout(r, 20));
  }
  const last = Math.max(...[...receipts.values()].map((r) => r.at));
  const latencies = [...receipts.values()].map((r) => r.at - r.createdAt);
  const seconds = (last - started) / 1000;
  console.log(`\nbench:delivery on ${machine()}; ${EVENTS} events, store ${store}, ${INSTANCES} instance(s)\n`);
  console.log('| run | deliveries/s | p50 ms | p99 ms |\n|---|---:|---:|---:|');
  console.log(`| server (${store}, ${INSTANCES} instance${INSTANCES > 1 ? 's' : ''}): event created → received | ${Math.round(EVENTS / seconds)} | ${percentile(latencies, 50)} | ${percentile(latencies, 99)} |`);
  console.log(`| raw floor: undici POST straight to the receiver (${4 * INSTANCES} connections) | ${floor.rps} | ${floor.p50.toFixed(2)} | ${floor.p99.toFixed(2)} |`);
  console.log(`\nproduction of ${EVENTS} orders took ${((produced - started) / 1000).toFixed(2)} s`);
} finally {
  await Promise.all(servers.map((s) => s.stop()));
  receiver.server.close();
  await db?.drop();
}
