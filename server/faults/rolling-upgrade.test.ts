// The release test (issue 60): two instances of the previous release (previous-release.commit,
// built from git) on one PostgreSQL database, rolled to the current code one at a time while
// orders (~100/s), payouts and their settlement, and webhook deliveries flow: an instance is
// taken out of the callers' rotation, stopped with SIGTERM, started again on the new code (the
// first one applies the new migrations, all expand, under the old instance still serving) and
// put back. Callers follow the contract: an answer with Retry-After is sent again after it,
// with the same Idempotency-Key (payouts: the same thirdPartyId). Like callers with a pool of
// connections, they keep at most MAX_ANSWERS_AWAITED requests unanswered: on a machine loaded
// past what the instances can answer (CI's other suites on two cores), orders fall due faster
// than they are answered, and an open loop without that bound buries the one instance serving
// during a roll until it cuts requests it cannot read in time (408), which is overload, not
// what this test is about (the fault matrix and the benches are).
//
// Once both run the new code, the last phase pays some orders (order.paid) and adds two
// endpoints routed by type (issue 68), one for order.paid and one for order.created.
//
// Asserted: no request failed but those Retry-After refusals; every acknowledged order is in
// the database once and no other order is (0 lost, 0 duplicated); every event and payout
// callback reached its destination; the endpoint made on the previous release (no event types:
// every type) received every order event of both types; each routed endpoint received exactly
// its type's events made after it was added; every delivery verified with its own endpoint's
// secret; none reached the endpoint disabled before the load; the old instance served on the
// new schema; both new instances registered their heartbeat.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../../testing/until.ts';
import { loadMigrations } from '../store/postgres/migrate.ts';
import { createTestDatabase, type TestDatabase } from '../store/postgres/testing.ts';
import { startServer, type RunningServer } from '../testing/child-server.ts';
import { buildPreviousRelease, type PreviousRelease } from './previous-release.ts';
import { LONG_FAULTS, report, tally } from './report.ts';
import { judge, Receiver, type Routed, type OrderEvent } from './rolling-receiver.ts';
import { MAX_ANSWERS_AWAITED, ORDERS_PER_PAYOUT, ORDERS_PER_SECOND, Traffic, type Creds } from './rolling-traffic.ts';

/** Once per CI run, like the fault matrix (SLOW_SUITES=skip for the other Node majors). */
const RUN = LONG_FAULTS && process.env.SLOW_SUITES !== 'skip';
/** Orders acknowledged in each phase: before the roll, after each instance's. */
const PER_PHASE = 200;
/** In the last phase, one order in this many is paid (a deposit: order.paid). */
const ORDERS_PER_DEPOSIT = 5;
/** order.paid events acknowledged before the routed endpoints are added (some they must not get). */
const PAID_BEFORE_ROUTING = 5;

describe.skipIf(!RUN)('rolling upgrade from the previous release under load (PostgreSQL, two instances)', () => {
  let old: PreviousRelease;
  let db: TestDatabase;
  let direct: pg.Client;
  const receiver = new Receiver();
  const running: RunningServer[] = [];

  beforeAll(async () => {
    const started = Date.now();
    const built = buildPreviousRelease().then((release) => {
      process.stdout.write(`previous release ${release.commit.slice(0, 7)} checked out and bundled in ${Date.now() - started} ms\n`);
      return release;
    });
    [old, db] = await Promise.all([built, createTestDatabase(), receiver.start()]);
    direct = new pg.Client({ connectionString: db.url });
    await direct.connect();
  }, 120_000);

  afterAll(async () => {
    for (const s of running) s.child.kill('SIGKILL');
    await direct?.end().catch(() => undefined);
    await receiver.close();
    await db?.drop();
    old?.remove();
  });

  it('loses, duplicates and fails nothing, delivers every event, none to a disabled endpoint', async () => {
    const env: NodeJS.ProcessEnv = {
      DATABASE_URL: db.url,
      SECRETS_KEY: randomBytes(32).toString('base64url'),
      NODE_ENV: 'development',
      WEBHOOK_ALLOW_INSECURE_URLS: 'true',
      RATE_LIMIT_RPS: '0',
      // A failed attempt is due again within a second or so, not minutes.
      WEBHOOK_RETRY_SCALE: '0.05',
    };
    const startOld = async (): Promise<RunningServer> => {
      const s = await startServer({ env, program: old.server, cwd: old.dir });
      running.push(s);
      return s;
    };
    const startNew = async (): Promise<RunningServer> => {
      const s = await startServer({ env });
      running.push(s);
      return s;
    };

    // Two instances of the previous release; a tenant made by its own admin tool. Started
    // together: the first to take the migration lock migrates, the others then find it done.
    const [oldA, oldB, tenant] = await Promise.all([startOld(), startOld(), old.runAdmin(['tenant', 'create', '--name', 'Rolling Upgrade Merchant'], env) as Promise<Creds>]);
    const headers = { 'content-type': 'application/json', 'x-api-key': tenant.apiKey, 'x-api-hash': tenant.apiHash };
    // An endpoint disabled before any event, then the active one.
    const first = await fetch(`${oldA.url}/v2/webhooks/endpoints`, { method: 'POST', headers, body: JSON.stringify({ url: `${receiver.url}/disabled` }) });
    expect(first.status).toBe(201);
    const firstId = ((await first.json()) as { id: string }).id;
    expect((await fetch(`${oldA.url}/v2/webhooks/endpoints/${firstId}`, { method: 'PATCH', headers, body: JSON.stringify({ active: false }) })).status).toBe(200);
    const made = await fetch(`${oldB.url}/v2/webhooks/endpoints`, { method: 'POST', headers, body: JSON.stringify({ url: `${receiver.url}/hook` }) });
    expect(made.status).toBe(201);
    // Made by a release without event types: after the roll it must go on receiving every type.
    const secrets = new Map([['/hook', ((await made.json()) as { secret: string }).secret]]);

    const traffic = new Traffic(tenant, `${receiver.url}/payouts`);
    traffic.rotation.push({ url: oldA.url, label: 'old A' }, { url: oldB.url, label: 'old B' });
    const began = Date.now();
    traffic.start();
    const acked = (n: number): Promise<boolean> => until(() => traffic.orders.size >= n, () => `${n} orders acknowledged (${traffic.orders.size}; failures ${traffic.failures.length})`, 60_000);

    /** Out of the rotation, SIGTERM, the new code on a new port, back in once ready. */
    const roll = async (s: RunningServer, label: string): Promise<{ migratedAt: number; ms: number }> => {
      const t0 = Date.now();
      traffic.rotation.splice(
        traffic.rotation.findIndex((r) => r.url === s.url),
        1,
      );
      // The balancer's connection draining: what it sent there is answered before the SIGTERM.
      await until(() => traffic.pendingTo(s.url) === 0, () => `the requests in flight to the instance leaving (${traffic.pendingTo(s.url)})`, 60_000);
      await s.stop();
      const next = await startNew();
      const migratedAt = Date.now();
      traffic.rotation.push({ url: next.url, label });
      return { migratedAt, ms: migratedAt - t0 };
    };

    await acked(PER_PHASE);
    const rollA = await roll(oldA, 'new A');
    // The old instance goes on serving on the schema the new one migrated (waited for within
    // the phase's orders, not before them).
    await Promise.all([
      acked(traffic.orders.size + PER_PHASE),
      until(() => traffic.orderAckedBy.some((o) => o.by === 'old B' && o.at > rollA.migratedAt), 'an order acknowledged by old B on the new schema', 30_000),
    ]);
    const rollB = await roll(oldB, 'new B');
    // Issue 68's routing. An older instance cannot fan an event out to several endpoints (it
    // sends to one, or fails to write the event: compat.json's endpoint_event_types), so the
    // routed endpoints are added only once both instances run this code, while this last
    // phase's orders flow, some of them paid from before the routed endpoints exist.
    const phaseEnd = traffic.orders.size + PER_PHASE;
    traffic.payEvery = ORDERS_PER_DEPOSIT;
    await until(() => traffic.paid.size >= PAID_BEFORE_ROUTING, () => `${PAID_BEFORE_ROUTING} orders paid (${traffic.paid.size})`, 30_000);
    /** An endpoint for events of `type` only, added through a new instance, and when. */
    const addRouted = async (path: string, type: string): Promise<Routed> => {
      const sent = Date.now();
      const r = await fetch(`${traffic.rotation[0]?.url}/v2/webhooks/endpoints`, { method: 'POST', headers, body: JSON.stringify({ url: `${receiver.url}${path}`, eventTypes: [type] }), signal: AbortSignal.timeout(30_000) });
      const acked = Date.now();
      const body = (await r.json()) as { secret: string };
      expect(r.status, JSON.stringify(body)).toBe(201);
      secrets.set(path, body.secret);
      return { path, type, window: { sent, acked } };
    };
    const routed = await Promise.all([addRouted('/paid', 'order.paid'), addRouted('/created', 'order.created')]);
    // Some orders go after them even if the phase's had all been acknowledged meanwhile.
    await acked(Math.max(phaseEnd, traffic.orders.size + PER_PHASE / 4));
    await traffic.stop();
    const loadMs = Date.now() - began;
    if (traffic.settledEarlier.size > 0) {
      const completed = await direct.query<{ id: string }>("SELECT id FROM transactions WHERE id = ANY($1) AND status = 'completed'", [[...traffic.settledEarlier]]);
      for (const { id } of completed.rows) traffic.settled.add(id);
    }

    // Everything the database holds must reach its destination: order events at the endpoints
    // that take them, payout callbacks at their notifyUrl. Every request has its answer, so the rows
    // are all there; they are read again once all have come, and any row new then is waited for.
    const deliveries = async () =>
      (await direct.query<{ event_id: string; url: string }>("SELECT event_id, url FROM deliveries WHERE kind IN ('order_event', 'payout_callback')")).rows;
    const deliveredBy = Date.now() + 45_000;
    for (let rows = -1; ; ) {
      const all = await deliveries();
      if (all.length === rows) break;
      rows = all.length;
      for (const d of all) receiver.await(new URL(d.url).pathname, d.event_id);
      await until(
        () => receiver.outstanding().count === 0,
        () => `every delivery received (missing ${receiver.outstanding().count}: ${receiver.outstanding().some.join(', ')})`,
        { timeoutMs: Math.max(0, deliveredBy - Date.now()), everyMs: 50 },
      );
    }

    const stored = (await direct.query<{ id: string; merchant_reference: string }>('SELECT id, merchant_reference FROM orders')).rows;
    const storedIds = new Set(stored.map((o) => o.id));
    const lost = [...traffic.orders.values()].filter((id) => !storedIds.has(id)).length;
    const perReference = new Map<string, number>();
    for (const o of stored) perReference.set(o.merchant_reference, (perReference.get(o.merchant_reference) ?? 0) + 1);
    const duplicated = [...perReference.values()].filter((n) => n > 1).length;
    const events = (await direct.query<OrderEvent>("SELECT id, type, order_id FROM events WHERE type LIKE 'order.%'")).rows;
    const hook = receiver.received('/hook');
    const undelivered = events.filter((e) => !hook.has(e.id)).length;
    const judged = routed.map((r) => ({ path: r.path, ...judge(r, events, receiver.received(r.path), traffic.windows) }));
    const unverified = receiver.unverified(secrets);
    const redelivered = [...hook.values()].filter((n) => n > 1).length;
    const callbacks = receiver.received('/payouts');
    const instances = (await direct.query<{ code_version: number }>('SELECT code_version FROM instances')).rows;
    const ackedBy = tally();
    for (const o of traffic.orderAckedBy) ackedBy.add(o.by);

    report({
      fault: `rolling upgrade ${old.commit.slice(0, 7)} → this code, 2 instances on PostgreSQL, ${ORDERS_PER_SECOND} orders/s and a payout per ${ORDERS_PER_PAYOUT}`,
      measured:
        `${traffic.sent} orders sent in ${(loadMs / 1000).toFixed(1)} s (held at ${MAX_ANSWERS_AWAITED} unanswered ${traffic.held} times), ${traffic.orders.size} acknowledged (${JSON.stringify(ackedBy.counts)}); ` +
        `${traffic.payouts.size} payouts, ${traffic.settled.size} settled (${traffic.settledEarlier.size} by an attempt answered outcome-unknown), ${callbacks.size} callbacks received; ` +
        `instance A rolled in ${(rollA.ms / 1000).toFixed(1)} s, B in ${(rollB.ms / 1000).toFixed(1)} s (stop + start + migrate)`,
      lost: lost + undelivered,
      duplicated,
      callerSaw: { failed: traffic.failures.length, ...traffic.refusals.counts },
      notes:
        `events delivered more than once (at-least-once): ${redelivered}; to the disabled endpoint: ${receiver.received('/disabled').size}; ` +
        `${traffic.paid.size} orders paid; routed endpoints added after the roll: ${JSON.stringify(judged)}; failures: ${traffic.failures.slice(0, 5).join(' | ')}`,
    });

    expect(traffic.failures).toEqual([]);
    expect(lost, 'acknowledged orders missing').toBe(0);
    expect(duplicated, 'merchant references with more than one order').toBe(0);
    expect(stored.length, 'orders stored = orders acknowledged').toBe(traffic.orders.size);
    expect(events.filter((e) => e.type === 'order.created').length).toBe(traffic.orders.size);
    expect(events.filter((e) => e.type === 'order.paid').length).toBe(traffic.paid.size);
    expect(traffic.paid.size).toBeGreaterThan(PAID_BEFORE_ROUTING);
    expect(undelivered, 'order events not received at the endpoint made on the previous release').toBe(0);
    expect(unverified, 'deliveries not signed with their endpoint\'s secret').toEqual([]);
    for (const j of judged) {
      expect(j, `${j.path}: its type's events made after it was added, and no other`).toMatchObject({ otherType: 0, early: 0, missed: 0, unknown: 0 });
      expect(j.before, `${j.path}: events of its type acknowledged before it was added`).toBeGreaterThan(0);
      expect(j.after, `${j.path}: events of its type sent after it was added`).toBeGreaterThan(0);
    }
    expect([...traffic.settled].length).toBe(traffic.payouts.size);
    expect(callbacks.size, 'payout callbacks received').toBe(traffic.settled.size);
    expect(receiver.received('/disabled').size, 'deliveries to the disabled endpoint').toBe(0);
    expect(ackedBy.counts['old B'] ?? 0).toBeGreaterThan(0);
    expect(ackedBy.counts['new A'] ?? 0).toBeGreaterThan(0);
    expect(ackedBy.counts['new B'] ?? 0).toBeGreaterThan(0);
    expect(instances).toEqual([{ code_version: loadMigrations().length }, { code_version: loadMigrations().length }]);
    // A clean shutdown deletes the instance's row: nothing holds a contract migration back.
    await Promise.all(running.map((s) => s.stop()));
    expect((await direct.query('SELECT id FROM instances')).rows).toEqual([]);
  }, 180_000);
});
