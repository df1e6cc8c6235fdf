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
// speed drifts between rounds.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { createManagementClient } from '../../client/api.ts';
import { parseDuration } from '../../server/retention/settings.ts';
import { checkSettings, positiveIntSetting } from '../lib/settings.ts';
import { cpuSnapshot, type CpuSnapshot } from './cpu.ts';
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

/** Rows the server's pruner has removed so far, all tables, from /metrics. */
async function prunedRows(server: RunningServer): Promise<number> {
  const text = await (await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text();
  return [...text.matchAll(/^retention_pruned_rows_total\{[^}]*\} (\d+)/gm)].reduce((sum, m) => sum + Number(m[1]), 0);
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
  return { name, server, headers, rounds: [], cpuUs: [], pruned: 0, drop: async () => void (await db?.drop()) };
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

/** CPU µs per request between two snapshots: the server's process and every PostgreSQL process. */
function cpuPerRequest(a: CpuSnapshot | null, b: CpuSnapshot | null, requests: number): number {
  if (!a || !b || requests === 0) return Number.NaN;
  const delta = (to: Map<number, number>, from: Map<number, number>): number => [...to].reduce((sum, [pid, v]) => sum + v - (from.get(pid) ?? 0), 0);
  const jiffies = delta(b.procs, a.procs) + delta(b.postgres, a.postgres);
  return Math.round((jiffies * 10_000) / requests); // a jiffy is 10 ms
}

/** A round of each side in turn; the pruning side's rows are removed before the other runs. */
async function measure(store: string, sides: [Side, Side]): Promise<void> {
  for (const side of sides) await orders(side, 3); // warm-up
  for (let round = 1; round <= ROUNDS; round++) {
    for (const side of round % 2 === 1 ? sides : [sides[1], sides[0]]) {
      const before = await quiet(side.server);
      const pids = side.server.child.pid === undefined ? [] : [side.server.child.pid];
      const cpu0 = cpuSnapshot(pids);
      const s = await orders(side, DURATION);
      const cpuUs = cpuPerRequest(cpu0, cpuSnapshot(pids), s.requests);
      const after = await quiet(side.server);
      side.rounds.push(s);
      side.cpuUs.push(cpuUs);
      side.pruned += after - before;
      console.error(`${store} ${side.name} round ${round}: ${s.rps} req/s, p99 ${s.p99} ms, ${cpuUs} CPU µs/order, ${s.errors} errors, ${s.non2xx} non-2xx; ${after - before} rows pruned`);
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
    return [
      `### ${store}`,
      '',
      '| server | rounds req/s | median req/s | median p99 ms | rounds CPU µs/order | median | errors/non-2xx | rows pruned |',
      '|---|---|---:|---:|---|---:|---:|---:|',
      ...[on, off].map((s) => `| ${s.name} | ${s.rounds.map((r) => r.rps).join(', ')} | ${median(s.rounds.map((r) => r.rps))} | ${median(s.rounds.map((r) => r.p99))} | ${s.cpuUs.join(', ')} | ${median(s.cpuUs)} | ${s.rounds.reduce((n, r) => n + r.errors, 0)}/${s.rounds.reduce((n, r) => n + r.non2xx, 0)} | ${s.pruned} |`),
      '',
      `pruner on ÷ off: throughput ${ratio.toFixed(3)}, CPU per order (off ÷ on: the throughput the cores would allow) ${cpuRatio.toFixed(3)} (goal ≥ ${GOAL}: ${ratio >= GOAL ? 'met' : 'not met'} by throughput, ${cpuRatio >= GOAL ? 'met' : 'not met'} by CPU)`,
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
