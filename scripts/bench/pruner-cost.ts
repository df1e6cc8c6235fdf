// npm run bench:pruner [-- --store sqlite|postgres|both --rounds 5 --duration 15 --connections 32 --retention 1s]
//
// What the retention pruner (server/retention/) costs `bench:api`'s orders row (POST /v2/orders:
// order + event + delivery to a loopback endpoint, the same request and settings): two servers
// on the same store kind, one pruning (PRUNER=on) and one not (PRUNER=off), measured in
// alternating rounds on the same machine in the same run. Issue 42's goal: the pruning
// server's throughput at least 0.95 of the other's.
//
// So that the pruner works during its own server's rounds and not the other's, every retention
// is shortened to --retention (default 1 s) and the pruner runs every second: the rows of a
// round expire while it runs and are removed as fast as they come in, the worst case of a
// steady state (at 30 days the same rows are removed a month later, at the same rate). Between
// rounds the bench waits until the round's webhooks are delivered (a backlog drained during the
// next round would take its cores) and the pruning server has removed the round's rows, and
// says how many it removed, from its /metrics. Beside req/s, each round's CPU per order (the
// server's process and PostgreSQL's, over the round): steadier than req/s on a machine whose
// speed drifts between rounds. Each round also says what the pruner's batches took and, on
// PostgreSQL, where its CPU went by process role, its WAL and the round's autovacuum runs
// (pg-activity.ts): what tells the pruner's own cost from what it leaves behind.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { createManagementClient } from '../../client/api.ts';
import { parseDuration } from '../../server/retention/settings.ts';
import { checkSettings, positiveIntSetting } from '../lib/settings.ts';
import { cpuSnapshot, type CpuSnapshot } from './cpu.ts';
import { diffCounters, pgCounters, samplePostgresCpu, type PgCounters, type PostgresCpu } from './pg-activity.ts';
import { machine, startServer, summarise, type DemoTenant, type RunningServer, type Summary } from './lib.ts';

const { values } = parseArgs({
  options: {
    store: { type: 'string', default: 'both' },
    rounds: { type: 'string', default: '5' },
    duration: { type: 'string', default: '15' },
    connections: { type: 'string', default: '32' },
    retention: { type: 'string', default: '1s' },
  },
});
const ROUNDS = checkSettings('bench:pruner', () => positiveIntSetting('--rounds', values.rounds));
const DURATION = checkSettings('bench:pruner', () => positiveIntSetting('--duration', values.duration));
const CONNECTIONS = checkSettings('bench:pruner', () => positiveIntSetting('--connections', values.connections));
checkSettings('bench:pruner', () => parseDuration('--retention', values.retention));
const STORES = values.store === 'both' ? ['sqlite', 'postgres'] : [values.store];
for (const s of STORES) if (s !== 'sqlite' && s !== 'postgres') throw new Error(`--store: sqlite, postgres or both, not ${s}`);
const METRICS_TOKEN = 'pruner-bench-metrics-token-0123456789';
const GOAL = 0.95;

interface Side {
  name: 'pruner on' | 'pruner off';
  server: RunningServer;
  headers: Record<string, string>;
  rounds: Summary[];
  /** CPU µs per order of each round: the server's process and PostgreSQL's, over the round. */
  cpuUs: number[];
  pruned: number;
  /** PostgreSQL's database of this side, when on PostgreSQL. */
  databaseUrl?: string;
  /** Per round on PostgreSQL: where its CPU went and what it wrote. */
  postgres: string[];
  drop(): Promise<void>;
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

let received = 0;
/** The loopback receiver both servers deliver to; counts what it receives. */
async function startReceiver(): Promise<{ url: string; close(): void }> {
  const receiver = createServer((req, res) =>
    req.resume().on('end', () => {
      received++;
      res.writeHead(204).end();
    }),
  );
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`, close: () => receiver.close() };
}

async function metricsText(server: RunningServer): Promise<string> {
  return (await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text();
}

const sumOf = (text: string, metric: RegExp): number => [...text.matchAll(metric)].reduce((sum, m) => sum + Number(m[1]), 0);

/** Rows the server's pruner has removed so far, all tables, from /metrics. */
async function prunedRows(server: RunningServer): Promise<number> {
  return sumOf(await metricsText(server), /^retention_pruned_rows_total\{[^}]*\} (\d+)/gm);
}

/** The pruner's batches so far, and the seconds they took, from /metrics. */
async function prunerBatches(server: RunningServer): Promise<{ batches: number; seconds: number }> {
  const text = await metricsText(server);
  return {
    batches: sumOf(text, /^retention_prune_batch_duration_seconds_count\{[^}]*\} (\d+)/gm),
    seconds: sumOf(text, /^retention_prune_batch_duration_seconds_sum\{[^}]*\} ([\d.e+-]+)/gm),
  };
}

/** Resolves once `count` has not moved for two seconds. */
async function settled(count: () => Promise<number>): Promise<number> {
  for (let last = -1, now = await count(); ; last = now, now = await count()) {
    if (now === last) return now;
    await sleep(2000);
  }
}

/** The round's webhooks delivered, then its rows pruned: what the pruner has removed so far. */
async function quiet(server: RunningServer): Promise<number> {
  await settled(async () => received);
  return settled(() => prunedRows(server));
}

async function startSide(store: string, name: Side['name'], receiverUrl: string): Promise<Side> {
  const db = store === 'postgres' ? await (await import('../../server/store/postgres/testing.ts')).createTestDatabase() : null;
  const r = values.retention;
  // bench:api's orders row: NODE_ENV=test for the loopback endpoint, production settings otherwise.
  const env: NodeJS.ProcessEnv = {
    NODE_ENV: 'test', WEBHOOK_ALLOW_INSECURE_URLS: 'true', RATE_LIMIT_RPS: '0', VALIDATE_RESPONSES: 'false', CHECK_NESTED_TRANSACTIONS: 'false', LOG_LEVEL: 'warn', METRICS_TOKEN,
    PRUNER: name === 'pruner on' ? 'on' : 'off', RETENTION_LIVE: r, RETENTION_TEST: r, IDEMPOTENCY_KEY_RETENTION: r, PRUNE_INTERVAL: '1s',
    ...(db ? { DATABASE_URL: db.url, SECRETS_KEY: Buffer.alloc(32, 7).toString('base64url') } : {}),
  };
  const server = await startServer({ env });
  const tenant: DemoTenant = server.tenant ?? (await (await import('./admin.ts')).createTenantViaAdmin(env));
  const management = createManagementClient({ baseUrl: server.url, memberToken: tenant.memberToken });
  const endpoint = await management.POST('/v2/webhooks/endpoints', { body: { url: receiverUrl } });
  if (endpoint.response.status !== 201) throw new Error(`endpoint: ${endpoint.response.status}`);
  const headers = { 'content-type': 'application/json', 'x-api-key': tenant.apiKey, 'x-api-hash': tenant.apiHash };
  return { name, server, headers, rounds: [], cpuUs: [], pruned: 0, databaseUrl: db?.url, postgres: [], drop: async () => void (await db?.drop()) };
}

let seq = 0;
/** One autocannon run of bench:api's orders request. */
function orders(side: Side, seconds: number): Promise<Summary> {
  const body = (): string => JSON.stringify({ merchantReference: `pruner-${process.pid}-${seq++}`, amountMinor: 1999 });
  return new Promise((resolve, reject) => {
    const opts: autocannon.Options = {
      url: side.server.url,
      duration: seconds,
      connections: CONNECTIONS,
      requests: [{ method: 'POST', path: '/v2/orders', headers: side.headers, setupRequest: (req) => ({ ...req, body: body() }) }],
    };
    autocannon(opts, (err, result) => (err ? reject(err) : resolve(summarise(side.name, result))));
  });
}

/** CPU µs per request: the server's process between two snapshots, and PostgreSQL's seconds. */
function cpuPerRequest(a: CpuSnapshot | null, b: CpuSnapshot | null, postgresSeconds: number, requests: number): number {
  if (!a || !b || requests === 0) return Number.NaN;
  const server = [...b.procs].reduce((sum, [pid, v]) => sum + v - (a.procs.get(pid) ?? 0), 0) / 100; // jiffies of 10 ms
  return Math.round(((server + postgresSeconds) * 1e6) / requests);
}

/** PostgreSQL's share of a round: CPU seconds by role, WAL, checkpoints, autovacuum runs. */
function describePostgres(cpu: PostgresCpu, c: PgCounters, database: string): string {
  const roles = Object.entries(cpu.byRole).filter(([, s]) => s >= 0.05).map(([r, s]) => `${r} ${s.toFixed(1)}`).join(', ');
  const mine = cpu.autovacuumByDatabase[database] ?? 0;
  const others = Object.values(cpu.autovacuumByDatabase).reduce((a, b) => a + b, 0) - mine;
  const other = Object.entries(cpu.otherByTitle).map(([t, s]) => `"${t}" ${s.toFixed(1)}`).join(', ');
  return `CPU s: ${roles}${other ? ` (other: ${other})` : ''} (autovacuum of this database ${mine.toFixed(1)}, of others ${others.toFixed(1)}); WAL ${(c.walBytes / 2 ** 20).toFixed(0)} MiB, ${c.walFpi} full pages, ${c.checkpoints} checkpoints; this database: ${c.autovacuums} autovacuums, ${c.autoanalyzes} autoanalyzes, dead tuples ${c.deadTuples >= 0 ? '+' : ''}${c.deadTuples}`;
}

/** One measured round of a side: throughput, CPU per order, and on PostgreSQL where it went. */
async function round(side: Side): Promise<{ s: Summary; cpuUs: number; postgres: string }> {
  const pids = side.server.child.pid === undefined ? [] : [side.server.child.pid];
  const counters0 = side.databaseUrl ? await pgCounters(side.databaseUrl) : null;
  const batches0 = await prunerBatches(side.server);
  const sampler = samplePostgresCpu();
  const cpu0 = cpuSnapshot(pids);
  const s = await orders(side, DURATION);
  const cpu1 = cpuSnapshot(pids);
  const pgCpu = sampler.stop();
  const postgresSeconds = side.databaseUrl ? Object.values(pgCpu.byRole).reduce((a, b) => a + b, 0) : 0;
  const batches1 = await prunerBatches(side.server);
  const counters = counters0 && side.databaseUrl ? diffCounters(counters0, await pgCounters(side.databaseUrl)) : null;
  const pruner = `pruner ${batches1.batches - batches0.batches} batches, ${(batches1.seconds - batches0.seconds).toFixed(2)} s in them`;
  const postgres = counters && side.databaseUrl ? `; ${describePostgres(pgCpu, counters, new URL(side.databaseUrl).pathname.slice(1))}` : '';
  return { s, cpuUs: cpuPerRequest(cpu0, cpu1, postgresSeconds, s.requests), postgres: pruner + postgres };
}

/** A round of each side in turn; the pruning side's rows are removed before the other runs. */
async function measure(store: string, sides: [Side, Side]): Promise<void> {
  for (const side of sides) await orders(side, 3); // warm-up
  for (let n = 1; n <= ROUNDS; n++) {
    for (const side of n % 2 === 1 ? sides : [sides[1], sides[0]]) {
      const before = await quiet(side.server);
      const { s, cpuUs, postgres } = await round(side);
      const after = await quiet(side.server);
      side.rounds.push(s);
      side.cpuUs.push(cpuUs);
      side.pruned += after - before;
      if (postgres) side.postgres.push(`${side.name} round ${n}: ${postgres}`);
      console.error(`${store} ${side.name} round ${n}: ${s.rps} req/s, p99 ${s.p99} ms, ${cpuUs} CPU µs/order, ${s.errors} errors, ${s.non2xx} non-2xx; ${after - before} rows pruned${postgres ? `\n  ${postgres}` : ''}`);
    }
  }
}

async function benchStore(store: string, receiverUrl: string): Promise<string[]> {
  const sides: Side[] = [];
  try {
    sides.push(await startSide(store, 'pruner on', receiverUrl));
    sides.push(await startSide(store, 'pruner off', receiverUrl));
    const [on, off] = sides as [Side, Side];
    await measure(store, [on, off]);
    const [rpsOn, rpsOff] = [median(on.rounds.map((s) => s.rps)), median(off.rounds.map((s) => s.rps))];
    const ratio = rpsOn / rpsOff;
    const cpuRatio = median(off.cpuUs) / median(on.cpuUs);
    // Round n of each side ran back to back, on the machine as it was then: the median of the
    // rounds' own ratios is steadier than the ratio of medians when the machine drifts.
    const paired = median(on.rounds.map((r, i) => r.rps / (off.rounds[i]?.rps ?? Number.NaN)));
    const pairedCpu = median(on.cpuUs.map((c, i) => (off.cpuUs[i] ?? Number.NaN) / c));
    return [
      `### ${store}`,
      '',
      '| server | rounds req/s | median req/s | median p99 ms | rounds CPU µs/order | median | errors/non-2xx | rows pruned |',
      '|---|---|---:|---:|---|---:|---:|---:|',
      ...[on, off].map((s) => `| ${s.name} | ${s.rounds.map((r) => r.rps).join(', ')} | ${median(s.rounds.map((r) => r.rps))} | ${median(s.rounds.map((r) => r.p99))} | ${s.cpuUs.join(', ')} | ${median(s.cpuUs)} | ${s.rounds.reduce((n, r) => n + r.errors, 0)}/${s.rounds.reduce((n, r) => n + r.non2xx, 0)} | ${s.pruned} |`),
      '',
      ...[...on.postgres, ...off.postgres].map((line) => `- ${line}`),
      ...(on.postgres.length ? [''] : []),
      `pruner on ÷ off: throughput ${ratio.toFixed(3)}, CPU per order (off ÷ on: the throughput the cores would allow) ${cpuRatio.toFixed(3)} (goal ≥ ${GOAL}: ${ratio >= GOAL ? 'met' : 'not met'} by throughput, ${cpuRatio >= GOAL ? 'met' : 'not met'} by CPU)`,
      `median of the rounds' own ratios (round n of each side, back to back): throughput ${paired.toFixed(3)}, CPU ${pairedCpu.toFixed(3)}`,
      '',
    ];
  } finally {
    for (const s of sides) {
      await s.server.stop();
      await s.drop();
    }
  }
}

const receiver = await startReceiver();
const out = [`bench:pruner on ${machine()}: bench:api's orders row, ${CONNECTIONS} connections, ${ROUNDS} alternating rounds of ${DURATION} s, retention ${values.retention}, pruner every 1 s`, ''];
try {
  for (const store of STORES) out.push(...(await benchStore(store, receiver.url)));
} finally {
  receiver.close();
}
console.log(out.join('\n'));
