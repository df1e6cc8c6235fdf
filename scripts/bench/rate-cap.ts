// npm run bench:rate-cap [-- --instances 2 --rate 20 --backlog 2000 --seconds 30]
//
// An endpoint's rate cap across instances (issue 69): one endpoint with maxPerSecond, a backlog
// queued while no server runs, then `instances` servers on one PostgreSQL database drain it.
// The loopback receiver counts receipts (deliveries, by event id) over `seconds` from the first
// one and reports the mean rate, the busiest 1-second window and the duplicates; the cap holds
// when the mean is within 10 % of it and no second exceeds it by more than one (pace.ts).
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { newDeliveryId, newEndpointId, newEnvironmentId, newEventId, newTenantId } from '../../server/domain/ids.ts';
import { createSecretBox } from '../../server/domain/secrets.ts';
import { HEALTHY, type DeliveryRecord, type EndpointRecord, type EnvironmentRecord, type EventRecord } from '../../server/domain/model.ts';
import { createTestDatabase } from '../../server/store/postgres/testing.ts';
import { openPostgresStore } from '../../server/store/postgres/store.ts';
import { checkSettings, positiveIntSetting } from '../lib/settings.ts';
import { machine, startServer, type RunningServer } from './lib.ts';

const { values } = parseArgs({
  options: {
    instances: { type: 'string', default: '2' },
    rate: { type: 'string', default: '20' },
    backlog: { type: 'string', default: '2000' },
    seconds: { type: 'string', default: '30' },
  },
});
const INSTANCES = checkSettings('bench:rate-cap', () => positiveIntSetting('--instances', values.instances));
const RATE = checkSettings('bench:rate-cap', () => positiveIntSetting('--rate', values.rate));
const BACKLOG = checkSettings('bench:rate-cap', () => positiveIntSetting('--backlog', values.backlog));
const SECONDS = checkSettings('bench:rate-cap', () => positiveIntSetting('--seconds', values.seconds));
const KEY = Buffer.alloc(32, 7);
const box = createSecretBox(KEY);
const SECRET = `whsec_${Buffer.alloc(32, 9).toString('base64url')}`;

// Receipt times (ms, monotonic) of each event's first delivery, and how many came twice.
const receipts: number[] = [];
const seen = new Set<string>();
let duplicates = 0;
const receiver = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    const id = String(req.headers['service-event-id'] ?? '');
    if (seen.has(id)) duplicates++;
    else {
      seen.add(id);
      receipts.push(performance.now());
    }
    res.writeHead(204).end();
  });
});
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;

const db = await createTestDatabase();
const servers: RunningServer[] = [];
try {
  const store = await openPostgresStore({ connectionString: db.url });
  await store.migrate();
  const now = Date.now();
  const tenant = { id: newTenantId(), name: 'Bench rate cap', createdAt: now };
  const env: EnvironmentRecord = { id: newEnvironmentId(), tenantId: tenant.id, name: 'test', walletBalance: '0', callbackSecretEnc: box.seal(SECRET), createdAt: now };
  const ep: EndpointRecord = { id: newEndpointId(), environmentId: env.id, url, secretEnc: box.seal(SECRET), signatureScheme: 'service-signature', eventTypes: null, maxPerSecond: RATE, active: true, version: 1, lastTestDeliveryId: null, createdAt: now, updatedAt: now, disabledAt: null, ...HEALTHY };
  await store.transaction(async (tx) => {
    await tx.tenants.insertTenant(tenant);
    await tx.tenants.insertEnvironment(env);
    await tx.endpoints.insert(ep);
  });
  // 200 a transaction: one of 2 000 can outlast a store transaction's deadline on a loaded machine.
  for (let from = 0; from < BACKLOG; from += 200) await store.transaction(async (tx) => {
    for (let i = from; i < Math.min(BACKLOG, from + 200); i++) {
      const id = newEventId();
      const payload = JSON.stringify({ id, type: 'order.created', apiVersion: 'v2', createdAt: new Date(now).toISOString(), data: {} });
      const event: EventRecord = { id, environmentId: env.id, type: 'order.created', payload, orderId: null, merchantReference: null, transactionId: null, createdAt: now };
      const d: DeliveryRecord = {
        id: newDeliveryId(now), environmentId: env.id, eventId: id, kind: 'order_event', endpointId: ep.id, endpointVersion: 1, url,
        state: 'pending', attemptCount: 0, cycle: 1, nextAttemptAt: now, leaseOwner: null, leaseExpiresAt: null, orderId: null,
        merchantReference: null, transactionId: null, createdAt: now, updatedAt: now, deliveredAt: null,
      };
      await tx.events.insert(event);
      await tx.deliveries.insert(d);
    }
  });
  await store.close();
  const base = { WEBHOOK_ALLOW_INSECURE_URLS: 'true', RATE_LIMIT_RPS: '0', LOG_LEVEL: 'warn', NODE_ENV: 'test', SECRETS_KEY: KEY.toString('base64url'), DATABASE_URL: db.url };
  servers.push(...(await Promise.all(Array.from({ length: INSTANCES }, () => startServer({ env: base })))));
  const deadline = Date.now() + 120_000;
  while ((receipts.length === 0 || performance.now() - receipts[0]! < SECONDS * 1000) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  if (receipts.length === 0) throw new Error('no delivery arrived within 120 s');
  const from = receipts[0]!;
  const inWindow = receipts.filter((t) => t - from < SECONDS * 1000);
  // The most receipts in any `ms` window: arrivals, so a stall of the sending thread or of this
  // receiver on a loaded machine bunches sends that left on the cap's spacing.
  const busiest = (ms: number): number => {
    let most = 0;
    for (let i = 0, j = 0; i < inWindow.length; i++) {
      while (inWindow[i]! - inWindow[j]! >= ms) j++;
      most = Math.max(most, i - j + 1);
    }
    return most;
  };
  const mean = inWindow.length / SECONDS;
  console.log(`bench:rate-cap on ${machine()}: ${INSTANCES} instances on PostgreSQL, maxPerSecond ${RATE}, backlog ${BACKLOG}`);
  console.log(`| delivered in ${SECONDS} s | mean /s | off the cap | busiest 1 s | busiest 5 s ÷ 5 | duplicates |`);
  console.log(`| ${inWindow.length} | ${mean.toFixed(2)} | ${(((mean - RATE) / RATE) * 100).toFixed(1)} % | ${busiest(1000)} | ${(busiest(5000) / 5).toFixed(1)} | ${duplicates} |`);
} finally {
  await Promise.all(servers.map((s) => s.stop()));
  await db.drop();
  receiver.close();
}
