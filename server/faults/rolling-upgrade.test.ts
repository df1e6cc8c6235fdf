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
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyWebhook } from '../../client/webhooks/index.ts';
import { until } from '../../testing/until.ts';
import { loadMigrations } from '../store/postgres/migrate.ts';
import { createTestDatabase, type TestDatabase } from '../store/postgres/testing.ts';
import { startServer, type RunningServer } from '../testing/child-server.ts';
import { buildPreviousRelease, type PreviousRelease } from './previous-release.ts';
import { LONG_FAULTS, report, tally } from './report.ts';

/** Once per CI run, like the fault matrix (SLOW_SUITES=skip for the other Node majors). */
const RUN = LONG_FAULTS && process.env.SLOW_SUITES !== 'skip';
const ORDERS_PER_SECOND = 100;
/** One payout (created, then settled) for this many orders. */
const ORDERS_PER_PAYOUT = 10;
/** Orders acknowledged in each phase: before the roll, after each instance's. */
const PER_PHASE = 200;
/** The sender looks this often and sends what fell due since (one timer, not one per order). */
const SEND_EVERY_MS = 50;
/** Requests sent and not answered yet, at most (a refusal's wait for Retry-After is not one). */
const MAX_ANSWERS_AWAITED = 100;
/** In the last phase, one order in this many is paid (a deposit: order.paid). */
const ORDERS_PER_DEPOSIT = 5;
/** order.paid events acknowledged before the routed endpoints are added (some they must not get). */
const PAID_BEFORE_ROUTING = 5;

interface Creds {
  apiKey: string;
  apiHash: string;
}

/** When a request was first sent and when it was acknowledged (ms since the epoch). */
interface Window {
  sent: number;
  acked: number;
}

/** An endpoint subscribed to one event type, added during the last phase. */
interface Routed {
  path: string;
  type: string;
  /** When its creation was sent and answered. */
  window: Window;
}

interface OrderEvent {
  id: string;
  type: string;
  order_id: string;
}

/**
 * What a routed endpoint received against its rule: exactly its type's events made after it was
 * added. An event whose request was acknowledged before the endpoint's creation was sent must
 * not reach it (`early`); one whose request was sent after the creation was answered must
 * (`missed`, `after` of them); one made while both were in flight may or may not (`overlapping`).
 */
function judge(r: Routed, events: readonly OrderEvent[], got: ReadonlyMap<string, number>, windows: ReadonlyMap<string, Window>) {
  const typeOf = new Map(events.map((e) => [e.id, e.type]));
  const verdict = { received: got.size, otherType: [...got.keys()].filter((id) => typeOf.get(id) !== r.type).length, before: 0, early: 0, after: 0, missed: 0, overlapping: 0, unknown: 0 };
  for (const e of events) {
    if (e.type !== r.type) continue;
    const w = windows.get(`${e.type} ${e.order_id}`);
    if (!w) verdict.unknown++;
    else if (w.acked < r.window.sent) {
      verdict.before++;
      if (got.has(e.id)) verdict.early++;
    } else if (w.sent > r.window.acked) {
      verdict.after++;
      if (!got.has(e.id)) verdict.missed++;
    } else verdict.overlapping++;
  }
  return verdict;
}

/** A receiver per path: the endpoints (active, disabled, routed), the payouts' notifyUrl. */
class Receiver {
  readonly byPath = new Map<string, Map<string, number>>();
  /**
   * Every delivery as it came, to verify its signature at the end (a routed endpoint's secret is
   * known only once its creation is answered, and its first delivery may come before that).
   */
  private readonly raw: Array<{ path: string; id: string; body: Buffer; headers: Record<string, string | string[] | undefined> }> = [];
  /**
   * Deliveries awaited (path and event id) and not received yet: kept as they arrive, so that
   * waiting for them all reads a count instead of matching every delivery row again per look.
   */
  private readonly awaited = new Set<string>();
  private server: Server | null = null;
  url = '';
  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const seen = this.byPath.get(req.url ?? '') ?? new Map<string, number>();
        this.byPath.set(req.url ?? '', seen);
        const id = String(req.headers['service-event-id'] ?? '');
        this.raw.push({ path: req.url ?? '', id, body: Buffer.concat(chunks), headers: req.headers });
        seen.set(id, (seen.get(id) ?? 0) + 1);
        this.awaited.delete(`${req.url ?? ''} ${id}`);
        res.writeHead(200).end('ok');
      });
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }
  /** The deliveries to the paths of `secrets` (path → its endpoint's secret) that do not verify with it, and why. */
  unverified(secrets: ReadonlyMap<string, string>): string[] {
    const bad: string[] = [];
    for (const d of this.raw) {
      const secret = secrets.get(d.path);
      if (secret === undefined) continue;
      try {
        verifyWebhook({ rawBody: d.body, headers: d.headers, secrets: secret });
      } catch (err) {
        bad.push(`${d.path} ${d.id}: ${(err as Error).message}`);
      }
    }
    return bad;
  }
  received(p: string): Map<string, number> {
    return this.byPath.get(p) ?? new Map();
  }
  /** Awaits the delivery of event `id` at path `p`, unless it has come already. */
  await(p: string, id: string): void {
    if (!this.received(p).has(id)) this.awaited.add(`${p} ${id}`);
  }
  /** The deliveries awaited that have not come, a few of them named. */
  outstanding(): { count: number; some: string[] } {
    return { count: this.awaited.size, some: [...this.awaited].slice(0, 3) };
  }
  close(): Promise<void> {
    return new Promise((resolve) => {
      this.server?.closeAllConnections();
      this.server?.close(() => resolve());
    });
  }
}

interface Answer {
  status: number;
  body: Record<string, unknown>;
  retryAfter: string | null;
  /** Which instance answered (its label). */
  by: string;
  /** An earlier attempt was answered 504 outcome-unknown: it may have gone in. */
  afterUnknown: boolean;
}

/**
 * Callers behind a load balancer: requests go round the instances in rotation; an instance
 * is taken out before it is stopped and put back once ready, as an orchestrator does.
 */
class Traffic {
  readonly rotation: Array<{ url: string; label: string }> = [];
  readonly refusals = tally();
  readonly failures: string[] = [];
  /** Acknowledged orders: key → order id, and who acknowledged each. */
  readonly orders = new Map<string, string>();
  readonly orderAckedBy: Array<{ by: string; at: number }> = [];
  readonly payouts = new Map<string, string>();
  readonly settled = new Set<string>();
  /**
   * Payouts whose settlement was answered 504 outcome-unknown, then 409 not-settleable when sent
   * again (the first attempt went in, a loaded machine's request deadline past): settled once
   * the database shows them completed.
   */
  readonly settledEarlier = new Set<string>();
  private n = 0;
  private readonly inFlight = new Set<Promise<void>>();
  private timer: NodeJS.Timeout | null = null;
  private readonly prefix = randomBytes(3).toString('hex');
  /** Requests on their way to each instance (url → count). */
  private readonly pending = new Map<string, number>();
  private unanswered = 0;
  /** How many times the sender found MAX_ANSWERS_AWAITED unanswered and held what fell due. */
  held = 0;
  /** One acknowledged order in this many is then paid; 0: none is. */
  payEvery = 0;
  /** Orders paid (their deposit acknowledged). */
  readonly paid = new Set<string>();
  /** Order event (`<type> <orderId>`) → the window of the request that made it. */
  readonly windows = new Map<string, Window>();

  constructor(
    private readonly creds: Creds,
    private readonly notifyUrl: string,
  ) {}

  private pick(): { url: string; label: string } {
    const target = this.rotation[this.n % this.rotation.length];
    if (!target) throw new Error('no instance in rotation');
    return target;
  }

  /** One request; an answer carrying Retry-After is sent again after it (at most 20 times). */
  private async call(method: string, pathName: string, body: unknown, headers: Record<string, string> = {}): Promise<Answer | null> {
    let afterUnknown = false;
    for (let attempt = 0; attempt < 20; attempt++) {
      const target = this.pick();
      let r: Response;
      this.pending.set(target.url, (this.pending.get(target.url) ?? 0) + 1);
      this.unanswered++;
      try {
        r = await fetch(`${target.url}${pathName}`, {
          method,
          headers: { 'content-type': 'application/json', 'x-api-key': this.creds.apiKey, 'x-api-hash': this.creds.apiHash, ...headers },
          body: JSON.stringify(body),
          signal: AbortSignal.timeout(30_000),
        });
      } catch (err) {
        this.pending.set(target.url, (this.pending.get(target.url) ?? 1) - 1);
        this.unanswered--;
        this.failures.push(`${method} ${pathName} to ${target.label}: no answer (${String((err as { cause?: { code?: string } }).cause?.code ?? (err as Error).message)})`);
        return null;
      }
      const answer: Answer = { status: r.status, body: (await r.json().catch(() => ({}))) as Record<string, unknown>, retryAfter: r.headers.get('retry-after'), by: target.label, afterUnknown };
      this.pending.set(target.url, (this.pending.get(target.url) ?? 1) - 1);
      this.unanswered--;
      if (answer.retryAfter === null || answer.status < 400) return answer;
      const problem = String(answer.body.type ?? '').split('/').pop();
      if (problem === 'outcome-unknown') afterUnknown = true;
      this.refusals.add(`${answer.status} ${problem}`);
      await new Promise((resolve) => setTimeout(resolve, Math.min(Number(answer.retryAfter) || 1, 10) * 1000));
    }
    this.failures.push(`${method} ${pathName}: still refused after 20 tries`);
    return null;
  }

  private async order(i: number): Promise<void> {
    const key = `roll-${this.prefix}-${i}`;
    const sent = Date.now();
    const a = await this.call('POST', '/v2/orders', { merchantReference: key, amountMinor: 1000 }, { 'idempotency-key': key });
    if (!a) return;
    if ((a.status === 201 || a.status === 200) && typeof a.body.orderId === 'string') {
      this.orders.set(key, a.body.orderId);
      this.orderAckedBy.push({ by: a.by, at: Date.now() });
      this.windows.set(`order.created ${a.body.orderId}`, { sent, acked: Date.now() });
      if (this.payEvery > 0 && i % this.payEvery === 0) await this.deposit(a.body.orderId);
    } else this.failures.push(`order ${key}: ${a.status} ${JSON.stringify(a.body).slice(0, 200)} from ${a.by}`);
  }

  /** A verified deposit: the order (made without amountBaseUnits) is paid, order.paid emitted. */
  private async deposit(orderId: string): Promise<void> {
    const sent = Date.now();
    // Sent again after an outcome-unknown answer, it is a surplus: no second event.
    const a = await this.call('POST', `/sandbox/orders/${orderId}/deposits`, { amountBaseUnits: '1000', verified: true, txHash: `0x${randomBytes(32).toString('hex')}` });
    if (!a) return;
    if (a.status === 201 && (a.body.order as { paymentStatus?: string } | undefined)?.paymentStatus === 'paid') {
      this.paid.add(orderId);
      this.windows.set(`order.paid ${orderId}`, { sent, acked: Date.now() });
    } else this.failures.push(`deposit to ${orderId}: ${a.status} ${JSON.stringify(a.body).slice(0, 200)} from ${a.by}`);
  }

  /** A payout, then its settlement (whose callback goes to notifyUrl). */
  private async payout(j: number): Promise<void> {
    const thirdPartyId = `roll-${this.prefix}-p${j}`;
    const a = await this.call('POST', '/transactions/payout', { thirdPartyId, userId: 'user-roll', amount: 1, notifyUrl: this.notifyUrl });
    if (!a) return;
    // A retry after a refusal that had in fact gone in finds the first one (409, its id).
    const id = a.status === 201 ? a.body.transactionId : a.status === 409 ? a.body.existingTransactionId : undefined;
    if (typeof id !== 'string') return void this.failures.push(`payout ${thirdPartyId}: ${a.status} ${JSON.stringify(a.body).slice(0, 200)} from ${a.by}`);
    this.payouts.set(thirdPartyId, id);
    const s = await this.call('POST', `/sandbox/payouts/${id}/settle`, { status: 'success' });
    if (!s) return;
    if (s.status === 200) this.settled.add(id);
    // The contract's settlement of an outcome-unknown answer: the same request again. Its 409
    // says the payout is no longer pending: the earlier attempt went in (checked in the database).
    else if (s.status === 409 && s.afterUnknown && String(s.body.type ?? '').endsWith('/not-settleable')) this.settledEarlier.add(id);
    else this.failures.push(`settle ${id}: ${s.status} ${JSON.stringify(s.body).slice(0, 200)} from ${s.by}`);
  }

  start(): void {
    const interval = 1_000 / ORDERS_PER_SECOND;
    let last = Date.now();
    let owed = 1;
    const tick = (): void => {
      // What fell due since the last look (or while this process was busy) goes now, unless as
      // many requests as a pool holds are unanswered: then it is not sent at all (not queued to
      // go later in a burst).
      const now = Date.now();
      owed += (now - last) / interval;
      last = now;
      for (; owed >= 1; owed--) {
        if (this.unanswered >= MAX_ANSWERS_AWAITED) {
          this.held++;
          owed = 0;
          break;
        }
        const i = this.n++;
        const p = (i % ORDERS_PER_PAYOUT === 0 ? Promise.all([this.order(i), this.payout(i / ORDERS_PER_PAYOUT)]) : this.order(i)).then(() => undefined);
        this.inFlight.add(p);
        void p.finally(() => this.inFlight.delete(p));
      }
    };
    tick();
    this.timer = setInterval(tick, SEND_EVERY_MS);
  }

  /** Requests to `url` not answered yet. */
  pendingTo(url: string): number {
    return this.pending.get(url) ?? 0;
  }

  get sent(): number {
    return this.n;
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    while (this.inFlight.size > 0) await Promise.all([...this.inFlight]);
  }
}

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
