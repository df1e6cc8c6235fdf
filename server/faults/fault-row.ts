// One row of the PostgreSQL fault matrix: real servers on a database of the test's own reached
// through the fault proxy, an open loop of orders, a receiver for their webhooks; the fault
// is applied, held, healed; then everything acknowledged is looked for in the database and at
// the receiver. What the row measured comes back for the test to report and assert.
import { randomBytes } from 'node:crypto';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import pg from 'pg';
import { until } from '../../testing/until.ts';
import { freePort } from '../testing/child-server.ts';
import { READYZ_WAIT_MS, startInstances, watchInstances, type ReadySample } from './instances.ts';
import { sendOrder, startOrderLoad, type Sent } from './order-load.ts';
import type { OwnPostgres } from './own-postgres.ts';
import { startReceiver } from './receiver.ts';
import { startFaultProxy, type FaultProxy } from './tcp-proxy.ts';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** The figures of a run: small ones in npm test, the issue's with FAULT_MATRIX=full. */
export interface Figures {
  ratePerSecond: number;
  warmMs: number;
  /** How long each fault is held (the slow and COMMIT rows, and a fail-over's gap, may differ). */
  faultMs: { blackhole: number; slow: number; cut: number; failover: number };
  afterMs: number;
  /**
   * The longest an order's answer may take: a store write as its caller sees it, connect +
   * transaction timeouts (docs/operations.md, 2 s + 4 s), plus 1 s for the rest of the
   * request. STORE_DEADLINE_MS overrides it (e.g. with other DATABASE_*_TIMEOUT_MS settings).
   */
  requestDeadlineMs: number;
  /** Bounds on recovery after the heal: readiness back, every pending delivery sent. */
  readyBoundMs: number;
  deliveryBoundMs: number;
  /** An instance that cannot work says so on /readyz this soon after the fault begins. */
  notReadyWithinMs: number;
  /** WEBHOOK_RETRY_SCALE of the instances. */
  retryScale: number;
  /** SIGTERM's documented grace; the row waits this plus 1 s before SIGKILL. */
  graceMs: number;
}

const num = (name: string, fallback: number): number => (process.env[name] ? Number(process.env[name]) : fallback);

export function figures(): Figures {
  const full = process.env.FAULT_MATRIX === 'full';
  return {
    ratePerSecond: num('FAULT_RATE', full ? 150 : 30),
    warmMs: full ? 5_000 : 2_000,
    faultMs: full ? { blackhole: 40_000, slow: 30_000, cut: 20_000, failover: 10_000 } : { blackhole: 10_000, slow: 8_000, cut: 5_000, failover: 8_000 },
    afterMs: full ? 15_000 : 4_000,
    // Quick runs shorten the webhooks' retry back-off, so a delivery whose attempt a fault
    // broke is due again within seconds; the full run keeps the documented schedule.
    retryScale: full ? 1 : 0.05,
    requestDeadlineMs: num('STORE_DEADLINE_MS', 7_000),
    readyBoundMs: 10_000,
    notReadyWithinMs: 5_000,
    // A claim whose COMMIT was cut holds its leases unknown to its worker until they expire
    // (30 s by default): its deliveries go after that (29.4–29.7 s after the heal, seen).
    deliveryBoundMs: full ? 60_000 : 45_000,
    graceMs: num('SHUTDOWN_GRACE_MS', 10_000),
  };
}

/** What a fault does to the database's network: the proxy in front of it, and a promoted host. */
export interface Rig {
  proxy: FaultProxy;
  /** The same data behind another address: the new primary of a fail-over. */
  promoted: FaultProxy;
  /** A port where nothing listens: a host that is down. */
  deadPort: number;
}

export interface RowSpec {
  fault: string;
  instances: number;
  faultMs: number;
  start(rig: Rig): void;
  heal(rig: Rig): void;
}

export interface RowResult {
  sent: Sent[];
  acked: number;
  lostOrders: number;
  lostEvents: number;
  duplicatedEvents: number;
  /** 503 store-unavailable ("nothing was written") for an order that was in fact stored. */
  untrue503: number;
  /**
   * Requests answered after the deadline, or not at all before the caller gave up. The bound is
   * the deadline plus twice the longest this process's event loop was held up during the row,
   * plus twice the longest any server's was (its /metrics): on a machine with more work than
   * cores, timers fire late and I/O waits its turn in every process (tens of ms on a quiet
   * machine), and a request crosses each event loop twice: this caller sends it and reads the
   * answer, the server takes it in (before its deadline starts) and answers at the deadline's
   * end. Once each was not enough: 7.9 s against 7 s + 313 ms + 581 ms, on two loaded cores.
   */
  pastDeadline: number;
  /** The longest delay of this process's event loop during the row (ms). */
  loopLagMs: number;
  /** The longest delay of any server's event loop during the row (ms). */
  serverLagMs: number;
  maxLatencyMs: number;
  firstFailureMs: number | null;
  firstAckAfterHealMs: number | null;
  readyAfterHealMs: Array<number | null>;
  /** Per instance: a 503 /readyz from notReadyWithinMs into the fault until its heal. */
  notReadyAtFaultEnd: boolean[];
  /** Per instance: the statuses /readyz answered in that stretch, counted (0: no answer). */
  readyzAtFaultEnd: string[];
  /** ms from the heal to the first delivery, and to the last pending one. */
  firstDeliveryAfterHealMs: number | null;
  allDeliveredAfterHealMs: number | null;
  /** Where undelivered events' deliveries stand (empty when all came). */
  stuck: string;
  /** /readyz answered 200 at the end while deliveries were still undelivered. */
  readyWhileStuck: boolean;
  /** Each instance's last /readyz sample when the row stopped watching: what a "never" was. */
  lastReadyz: string[];
  settled: Record<string, number>;
  rssGrowthMb: number[];
  exitMs: Array<number | null>;
  proxy: FaultProxy['counts'];
  callerSaw: Record<string, number>;
}

async function createDatabase(own: OwnPostgres): Promise<string> {
  const name = `faults_${randomBytes(6).toString('hex')}`;
  const c = new pg.Client({ connectionString: own.url() });
  await c.connect();
  await c.query(`CREATE DATABASE ${name}`);
  await c.end();
  return name;
}

const label = (s: Omit<Sent, 'instance'>): string =>
  s.status === 0 ? `no answer (${s.error})` : s.problem ? `${s.status} ${s.problem}` : s.replayed ? `${s.status} replayed` : String(s.status);

function tallyOf(sent: readonly Sent[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const s of sent) out[label(s)] = (out[label(s)] ?? 0) + 1;
  return out;
}

/** The longest an answer may take, seen from this process: the deadline, and each process's stalls twice (RowResult.pastDeadline). */
export function deadlineBound(f: Pick<Figures, 'requestDeadlineMs'>, loopLagMs: number, serverLagMs: number): number {
  return f.requestDeadlineMs + 2 * (loopLagMs + serverLagMs);
}

/** "503×9, 0×1": how many samples answered each status. */
function statusCounts(samples: readonly ReadySample[]): string {
  const n = new Map<number, number>();
  for (const r of samples) n.set(r.status, (n.get(r.status) ?? 0) + 1);
  return [...n].map(([status, count]) => `${status}×${count}`).join(', ') || 'no sample';
}

/** The first sample sent from `from` on that the instance answered 200 (samples may answer out of order). */
function readyAfter(samples: readonly ReadySample[], instance: number, from: number): number | null {
  const ok = samples.filter((r) => r.instance === instance && r.at >= from && r.status === 200).map((r) => r.at);
  return ok.length > 0 ? Math.min(...ok) - from : null;
}

/** Retries each request with its key, a few at a time; none once one goes unanswered. */
async function settle(url: string, creds: { apiKey: string; apiHash: string }, unsettled: Sent[], capMs: number): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  const queue = [...unsettled];
  let down = false;
  const worker = async (): Promise<void> => {
    for (let s = queue.shift(); s; s = queue.shift()) {
      const again = down ? null : await sendOrder(url, creds, s.key, capMs);
      if (again?.status === 0) down = true;
      const l = again ? label(again) : 'not retried (the API did not answer)';
      out[l] = (out[l] ?? 0) + 1;
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  return out;
}

/** Everything a row stands on: a fresh database behind the proxy, instances, a receiver. */
interface Stage {
  db: string;
  rig: Rig;
  receiver: Awaited<ReturnType<typeof startReceiver>>;
  inst: Awaited<ReturnType<typeof startInstances>>;
  direct: pg.Client;
  creds: { apiKey: string; apiHash: string };
  close(): Promise<void>;
}

async function openStage(own: OwnPostgres, instances: number, f: Figures): Promise<Stage> {
  const db = await createDatabase(own);
  const promoted = await startFaultProxy({ upstreamPort: own.port });
  const proxy = await startFaultProxy({ upstreamPort: own.port });
  // A port taken and released: nothing listens there.
  const rig: Rig = { proxy, promoted, deadPort: await freePort() };
  const receiver = await startReceiver();
  const direct = new pg.Client({ connectionString: own.url(db) });
  const stage: Stage = {
    db,
    rig,
    receiver,
    inst: { servers: [], tenant: null as never, urls: [], secretsKey: '', stallsMs: async () => [], stop: async () => [] },
    direct,
    creds: { apiKey: '', apiHash: '' },
    async close() {
      await stage.inst.stop(0).catch(() => undefined);
      await direct.end().catch(() => undefined);
      await receiver.close();
      await proxy.close();
      await promoted.close();
    },
  };
  try {
    stage.inst = await startInstances(instances, proxyUrl(stage), own.url(db), instanceEnv(f));
    await direct.connect();
    stage.creds = { apiKey: stage.inst.tenant.apiKey, apiHash: stage.inst.tenant.apiHash };
    const ep = await fetch(`${stage.inst.urls[0]}/v2/webhooks/endpoints`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': stage.creds.apiKey, 'x-api-hash': stage.creds.apiHash },
      body: JSON.stringify({ url: receiver.url }),
    });
    if (ep.status !== 201) throw new Error(`webhook endpoint: ${ep.status} ${await ep.text()}`);
    return stage;
  } catch (err) {
    await stage.close();
    throw err;
  }
}

const instanceEnv = (f: Figures): NodeJS.ProcessEnv => ({ SHUTDOWN_GRACE_MS: String(f.graceMs), WEBHOOK_RETRY_SCALE: String(f.retryScale) });

const proxyUrl = (s: Pick<Stage, 'rig' | 'db'>): string => `postgres://postgres@127.0.0.1:${s.rig.proxy.port}/${s.db}`;

/** Acknowledged orders missing from the database; events not delivered by `by`. */
async function account(stage: Stage, sent: readonly Sent[], by: number): Promise<{ acked: Sent[]; lostOrders: number; events: string[]; lostEvents: number; stuck: string }> {
  const stored = new Set((await stage.direct.query<{ id: string }>('SELECT id FROM orders')).rows.map((r) => r.id));
  const acked = sent.filter((s) => (s.status === 201 || s.status === 200) && s.orderId);
  const lostOrders = acked.filter((s) => !stored.has(s.orderId as string)).length;
  const events = (await stage.direct.query<{ id: string }>("SELECT id FROM events WHERE type = 'order.created'")).rows.map((r) => r.id);
  const { receipts } = stage.receiver;
  while (Date.now() < by && events.some((id) => !receipts.has(id))) await sleep(200);
  const undelivered = events.filter((id) => !receipts.has(id));
  return { acked, lostOrders, events, lostEvents: undelivered.length, stuck: await whyUndelivered(stage, undelivered) };
}

/** Where the undelivered events' deliveries stand: state, attempts, when due, whether leased. */
async function whyUndelivered(stage: Stage, eventIds: string[]): Promise<string> {
  if (eventIds.length === 0) return '';
  const rows = await stage.direct.query<{ state: string; attempts: number; due_in_s: number | null; leased: boolean; last: string | null; n: number }>(
    `SELECT d.state, d.attempt_count AS attempts, round((d.next_attempt_at - $2) / 1000.0)::int AS due_in_s,
            EXISTS (SELECT 1 FROM delivery_leases l WHERE l.delivery_seq = d.seq) AS leased,
            (SELECT a.outcome || coalesce(' ' || a.error_class, '') || coalesce(' ' || a.status_code, '') || ' after ' || a.duration_ms || ' ms'
               FROM delivery_attempts a WHERE a.delivery_id = d.id ORDER BY a.cycle DESC, a.number DESC LIMIT 1) AS last,
            count(*)::int AS n
       FROM deliveries d WHERE d.event_id = ANY($1) GROUP BY 1, 2, 3, 4, 5 ORDER BY n DESC LIMIT 5`,
    [eventIds, Date.now()],
  );
  return rows.rows
    .map((r) => `${r.n}× ${r.state}, ${r.attempts} attempts${r.last ? ` (last: ${r.last})` : ''}, due in ${r.due_in_s ?? '-'} s${r.leased ? ', leased' : ''}`)
    .join('; ');
}

export interface ShutdownResult {
  acked: number;
  /** ms from SIGTERM to exit, or null: still running at grace + 1 s, killed. */
  exitMs: number | null;
  lostOrders: number;
  lostEvents: number;
  stuck: string;
  callerSaw: Record<string, number>;
}

/**
 * SIGTERM while the database is silent: the instance must exit within its grace period
 * (plus 1 s). Then the database comes back and a new instance sends what the first left.
 */
export async function runShutdownRow(own: OwnPostgres, f: Figures): Promise<ShutdownResult> {
  const stage = await openStage(own, 1, f);
  try {
    const load = startOrderLoad({ urls: stage.inst.urls, creds: stage.creds, ratePerSecond: f.ratePerSecond, callerCapMs: f.requestDeadlineMs * 4 });
    await sleep(f.warmMs);
    stage.rig.proxy.blackhole();
    await sleep(3_000);
    const [exitMs] = await stage.inst.stop(f.graceMs + 1_000);
    await load.stop();
    stage.rig.proxy.pass();
    const healAt = Date.now();
    // The same SECRETS_KEY: with another, the new instance could open no endpoint's secret
    // and every attempt it made would fail unsigned.
    stage.inst = await startInstances(1, proxyUrl(stage), own.url(stage.db), { ...instanceEnv(f), SECRETS_KEY: stage.inst.secretsKey });
    // What the first instance held when it went is sent once its leases expire (30 s by default:
    // the attempt timeout + the lease margin, server/delivery/worker/limits.ts).
    const a = await account(stage, load.sent, healAt + 30_000 + f.deliveryBoundMs);
    return { acked: a.acked.length, exitMs: exitMs ?? null, lostOrders: a.lostOrders, lostEvents: a.lostEvents, stuck: a.stuck, callerSaw: tallyOf(load.sent) };
  } finally {
    await stage.close();
  }
}

export async function runRow(own: OwnPostgres, spec: RowSpec, f: Figures): Promise<RowResult> {
  const stage = await openStage(own, spec.instances, f);
  const { rig, receiver, inst, creds } = stage;
  try {
    const watcher = watchInstances(inst, 250);
    await inst.stallsMs();
    const lag = monitorEventLoopDelay({ resolution: 20 });
    lag.enable();
    const load = startOrderLoad({ urls: inst.urls, creds, ratePerSecond: f.ratePerSecond, callerCapMs: f.requestDeadlineMs * 4 });
    await sleep(f.warmMs);
    const faultAt = Date.now();
    spec.start(rig);
    await sleep(spec.faultMs);
    const healAt = Date.now();
    spec.heal(rig);
    await sleep(f.afterMs);
    await load.stop();
    lag.disable();
    const loopLagMs = Math.round(lag.max / 1e6);
    const serverLagMs = Math.max(0, ...(await inst.stallsMs()));
    const sent = [...load.sent];

    // What the database holds, before any retry adds to it; then every pending delivery is
    // sent within the bound, without a restart.
    const keys = new Set((await stage.direct.query<{ k: string }>('SELECT idempotency_key AS k FROM order_idempotency_keys')).rows.map((r) => r.k));
    const untrue503 = sent.filter((s) => s.status === 503 && keys.has(s.key)).length;
    const { acked, lostOrders, events, lostEvents, stuck } = await account(stage, sent, healAt + f.deliveryBoundMs);
    const lastReady = inst.servers.map((_, i) => [...watcher.ready].reverse().find((r) => r.instance === i)?.status);
    // Every event may be in before an instance's /readyz had to be back: the watcher goes on
    // until each has answered 200 since the heal, or the bound (with the stalls) has passed.
    const readyBy = healAt + f.readyBoundMs + loopLagMs + serverLagMs;
    await until(() => inst.servers.every((_, i) => readyAfter(watcher.ready, i, healAt) !== null) || Date.now() > readyBy, 'the readiness bound', { timeoutMs: f.readyBoundMs + loopLagMs + serverLagMs + 5_000, everyMs: 250 });
    const lastSample = inst.servers.map((_, i) => [...watcher.ready].reverse().find((r) => r.instance === i));
    watcher.stop();
    const firstDelivery = receiver.times.find((t) => t >= healAt);

    // The documented settlement: the same request again, with the same key (once the API is back).
    const unsettled = sent.filter((x) => x.status !== 201 && x.status !== 200);
    const settled = await settle(inst.urls[0] as string, creds, unsettled, f.requestDeadlineMs);

    const answered = sent.filter((s) => s.answeredAt !== null);
    const latency = (s: Sent): number => (s.answeredAt ?? Number.POSITIVE_INFINITY) - s.sentAt;
    const failures = sent.filter((s) => s.status >= 500 && (s.answeredAt ?? 0) >= faultAt).map((s) => (s.answeredAt as number) - faultAt);
    const acksAfterHeal = acked.filter((s) => s.sentAt >= healAt).map((s) => (s.answeredAt as number) - healAt);
    const faultEndWindow = faultAt + Math.min(f.notReadyWithinMs, spec.faultMs);
    const atFaultEnd = (i: number): ReadySample[] => watcher.ready.filter((r) => r.instance === i && r.at >= faultEndWindow && r.at <= healAt);
    const rss = watcher.rss();
    const exitMs = await inst.stop(f.graceMs + 1_000);
    return {
      sent,
      acked: acked.length,
      lostOrders,
      lostEvents,
      duplicatedEvents: events.filter((id) => (receiver.receipts.get(id) ?? 0) > 1).length,
      untrue503,
      pastDeadline: sent.filter((s) => latency(s) > deadlineBound(f, loopLagMs, serverLagMs)).length,
      loopLagMs,
      serverLagMs,
      maxLatencyMs: Math.max(0, ...answered.map(latency)),
      firstFailureMs: failures.length ? Math.min(...failures) : null,
      firstAckAfterHealMs: acksAfterHeal.length ? Math.min(...acksAfterHeal) : null,
      readyAfterHealMs: inst.servers.map((_, i) => readyAfter(watcher.ready, i, healAt)),
      lastReadyz: lastSample.map((r) => (r === undefined ? 'no sample' : `${r.status === 0 ? `no answer within ${READYZ_WAIT_MS / 1000} s` : r.status}${r.detail ? ` (${r.detail})` : ''}`)),
      notReadyAtFaultEnd: inst.servers.map((_, i) => atFaultEnd(i).some((r) => r.status === 503)),
      readyzAtFaultEnd: inst.servers.map((_, i) => statusCounts(atFaultEnd(i))),
      firstDeliveryAfterHealMs: firstDelivery === undefined ? null : firstDelivery - healAt,
      allDeliveredAfterHealMs: lostEvents === 0 ? Math.max(0, ...events.map((id) => (receiver.firstAt.get(id) ?? healAt) - healAt)) : null,
      stuck,
      readyWhileStuck: lostEvents > 0 && lastReady.some((s) => s === 200),
      settled,
      rssGrowthMb: rss.map((m) => Math.round(m.max - m.first)),
      exitMs,
      proxy: { ...rig.proxy.counts },
      callerSaw: tallyOf(sent),
    };
  } finally {
    await stage.close();
  }
}
