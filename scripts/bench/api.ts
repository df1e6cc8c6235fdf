// npm run bench:api [-- --store sqlite|postgres|both --only reads,floor,orders --duration S --connections N --rounds R]: the real
// server (child process, production settings: LOG_LEVEL=warn, VALIDATE_RESPONSES=false,
// CHECK_NESTED_TRANSACTIONS=false, RATE_LIMIT_RPS=0) on each store, every row beside its floor measured in the same run with
// the same load generator (autocannon): a bare node:http server that reads and parses the same
// request and answers the same bytes the real server answered.
//
//   POST /transactions/payout  (a durable write: wallet debit + transaction)   ÷ echo
//   GET  /transactions/users   (20 items)                                      ÷ echo of the same bytes
//        and the same with LIST_CACHE_MB=0 (what a read costs that the cache of rendered
//        pages cannot answer)
//   POST /v2/orders            (order + event + delivery to an active endpoint) ÷ echo
//        and on PostgreSQL the same on an API-only instance (DELIVERY_WORKER=off): the write
//        path alone, as pgbench's script of it is, the sending left to other instances
//
//   POST /v2/orders            against its floor (orders-floor.ts, floor/server.ts): a minimal
//        server writing the same rows with the same durability, alternated with the server
//        round after round (--rounds), with and without an endpoint; the medians. The default.
//        Then the server alone with four endpoints of different types (orders-fan-out.ts):
//        deliveries/s beside the one-endpoint row's.
//
// The server runs from the same esbuild bundle the tests run (server-bundle.ts), built at the
// start of the bench. --profile DIR writes a V8 CPU profile of every server process there
// (summarise one with scripts/bench/profile-summary.ts). The payout and list rows also stand beside
// the framework's floor: the same replies from bare Hono on @hono/node-server (HONO_ECHO).
//
// The PostgreSQL rows also stand beside PostgreSQL's own ceilings, measured in the same run on
// the same database (pg-ceilings.ts): pgbench running each row's statements, and for the list
// the same query through `pg` from Node. Without pgbench the table says so. Each run also
// reports where the machine's CPU went (server, PostgreSQL, bench), and the PostgreSQL rows the
// database's CPU per request: what says whether a row is bound by the cores or by a wait.
//
// The orders row needs a webhook endpoint on loopback, which NODE_ENV=production refuses; that
// server runs with NODE_ENV=test and WEBHOOK_ALLOW_INSECURE_URLS=true (the only difference:
// the destination policy), and its delivery engine delivers to a loopback receiver meanwhile.
import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { mkdir, mkdtemp } from 'node:fs/promises';
import path from 'node:path';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { createManagementClient } from '../../client/api.ts';
import { machine, startServer, summarise, type DemoTenant, type RunningServer, type Summary } from './lib.ts';
import { checkSettings, positiveIntSetting } from '../lib/settings.ts';
import { BATCHED_ORDERS, driverLoop, findPgbench, pgbench, pgbenchScripts, type Ceiling } from './pg-ceilings.ts';
import { cpuShare, cpuSnapshot, describeShare, type CpuShare } from './cpu.ts';
import { startEcho, type Replies } from './echo.ts';
import { connectionsTable, floorTable, ordersAgainstFloor, ordersUnderConnections, type Baseline, type ConnectionsRow, type FloorRow } from './orders-floor.ts';
import { fanOutCase } from './orders-fan-out.ts';
import { fanOutTable } from './orders-fan-out-table.ts';
import { BUNDLE_DIR_VARIABLE, buildChildBundles } from '../../server/testing/server-bundle.ts';
import { ROOT } from '../lib/specs.ts';

const { values } = parseArgs({
  options: {
    store: { type: 'string', default: 'both' },
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '32' },
    // Which blocks: reads (payout and list, with their servers), floor (orders against the
    // floor), connections (orders under 16 and 512 connections: goodput, timeouts, memory)
    // and/or orders (orders against the echo, and PostgreSQL's ceilings).
    only: { type: 'string', default: 'reads,floor' },
    rounds: { type: 'string', default: '3' },
    // An earlier commit's server measured in the same floor rounds and, in the reads block,
    // on the payout and list rows (its bundle built from git, on this tree's node_modules): the
    // before/after of a change in one run.
    baseline: { type: 'string' },
    // A folder for V8 CPU profiles of the server processes (node --cpu-prof), written at exit.
    profile: { type: 'string' },
  },
});
const duration = checkSettings('bench:api', () => positiveIntSetting('--duration', values.duration));
const connections = checkSettings('bench:api', () => positiveIntSetting('--connections', values.connections));
const rounds = checkSettings('bench:api', () => positiveIntSetting('--rounds', values.rounds));
if (values.store !== 'both' && values.store !== 'sqlite' && values.store !== 'postgres') {
  process.stderr.write(`bench:api: --store must be sqlite, postgres or both, not ${values.store}\n`);
  process.exit(2);
}
const ONLY = new Set(values.only.split(','));
if ([...ONLY].some((b) => b !== 'reads' && b !== 'orders' && b !== 'floor' && b !== 'connections')) {
  process.stderr.write(`bench:api: --only takes reads, floor, connections and/or orders, not ${values.only}\n`);
  process.exit(2);
}
const stores = values.store === 'both' ? (['sqlite', 'postgres'] as const) : ([values.store] as const);

/** User + system CPU seconds a process has used so far (Linux /proc; clock ticks of 10 ms). */
function cpuSeconds(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return null;
  }
}

/**
 * One autocannon run. With `pid`, also the CPU time that process spent per request: on a
 * machine shared with other work that is steadier than req/s, and its ratio between the
 * server and the echo is what the throughput ratio would be with the cores to themselves.
 */
function run(name: string, opts: autocannon.Options, seconds = duration, pid?: number): Promise<Measured> {
  const before = cpuSeconds(pid);
  const machineBefore = cpuSnapshot(pid === undefined ? [] : [pid]);
  return new Promise((resolve, reject) => {
    autocannon({ duration: seconds, connections, ...opts }, (err, result) => {
      if (err) return reject(err);
      const after = cpuSeconds(pid);
      const share = cpuShare(machineBefore, cpuSnapshot(pid === undefined ? [] : [pid]));
      const s = summarise(name, result);
      const cpuUs = before === null || after === null || s.requests === 0 ? null : Math.round(((after - before) * 1e6) / s.requests);
      report(s, cpuUs, share);
      resolve({ ...s, cpuUs, pgUs: pgMicros(share, s.rps) });
    });
  });
}

/** PostgreSQL's CPU µs per request (or transaction) over a window, from its processes' share. */
const pgMicros = (share: CpuShare | null, rate: number | null): number | null => (share && rate ? Math.round((share.postgres * 1e6) / rate) : null);

const nodeArgs = values.profile ? { nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${values.profile}`] } : {};
let seq = 0;
const headersOf = (t: DemoTenant): Record<string, string> => ({ 'content-type': 'application/json', 'x-api-key': t.apiKey, 'x-api-hash': t.apiHash });
const payoutBody = (): string => JSON.stringify({ thirdPartyId: `bench-${process.pid}-${seq++}`, userId: `user-${seq % 50}`, amount: 0.01 });
const orderBody = (): string => JSON.stringify({ merchantReference: `bench-${process.pid}-${seq++}`, amountMinor: 1999 });
const post = (base: string, path: string, headers: Record<string, string>, body: () => string): autocannon.Options => ({
  url: base,
  requests: [{ method: 'POST', path, headers, setupRequest: (req) => ({ ...req, body: body() }) }],
});
const LIST = '/transactions/users?userId=user-listed&limit=20';
interface Measured extends Summary {
  /** CPU µs the measured process spent per request (server: the Node process only, not PostgreSQL). */
  cpuUs: number | null;
  /** CPU µs PostgreSQL's processes spent per request over the same window. */
  pgUs: number | null;
}
const report = (s: Summary, cpuUs: number | null, share: CpuShare | null): void =>
  console.error(`${s.name}: ${s.rps} req/s, p99 ${s.p99} ms, ${cpuUs ?? '?'} CPU µs/request, ${s.errors} errors, ${s.non2xx} non-2xx; ${describeShare(share)}`);

/** Resolves once `count` has not moved for a second; after a minute it says so and goes on. */
async function drained(count: () => number): Promise<void> {
  for (let last = -1, i = 0; count() !== last; i++) {
    if (i === 60) return void console.error('the webhook backlog still drains after 60 s: the floor below shares the cores with it');
    last = count();
    await new Promise((r) => setTimeout(r, 1000));
  }
}

async function capture(url: string, init: RequestInit): Promise<{ status: number; body: string }> {
  const r = await fetch(url, init);
  return { status: r.status, body: await r.text() };
}

interface Row {
  what: string;
  server: Measured;
  floor: Measured;
  /** The --baseline commit's server on the same row, measured in the same run on data of its own. */
  baseline?: Measured;
  /** The framework's floor (HONO_ECHO): the same replies from bare Hono on @hono/node-server. */
  framework?: Measured;
  /** PostgreSQL rows: pgbench running the row's statements, and for the list the raw driver loop. */
  pgbench?: Ceiling;
  driver?: Ceiling;
}

const PAYOUT = 'POST /transactions/payout';
const LIST_ROW = 'GET /transactions/users (20 items)';
const ORDERS = 'POST /v2/orders (order + event + delivery)';
/** The same on an instance that only serves the API (DELIVERY_WORKER=off, PostgreSQL): the write
 * path alone, as pgbench's script is, while the sending is left to other instances. */
const ORDERS_API_ONLY = 'POST /v2/orders, API-only instance (DELIVERY_WORKER=off)';

/** The batched orders ceiling's line, printed under the PostgreSQL table. */
let batched: string | null = null;

/**
 * PostgreSQL's ceilings for the rows, on the bench's database once the server is idle: pgbench
 * of each row's statements, and the list query through `pg`. Said, never skipped, when missing.
 */
async function ceilings(url: string, rows: Row[]): Promise<void> {
  const bin = findPgbench();
  if (bin === null) console.error('pgbench not found: the PostgreSQL rows are printed without their pgbench ceilings');
  const scripts = await pgbenchScripts(url, ONLY.has('reads') ? 'user-listed' : null, ONLY.has('orders'));
  const byRow: Array<[string, string | undefined]> = [[LIST_ROW, scripts.read], [PAYOUT, scripts.payout], [ORDERS, scripts.order]];
  for (const [what, script] of byRow) {
    if (script === undefined) continue;
    const before = cpuSnapshot([]);
    const c = await pgbench(bin, url, script, duration, connections);
    // Cores busy only: pgbench's backends come and go within the window, so no per-process share.
    const share = cpuShare(before, cpuSnapshot([]));
    console.error(`pgbench ${what}: ${c.rate ?? '–'} /s (${c.note}); ${share ? `CPU ${share.busy} of ${share.cores} cores busy` : ''}`);
    for (const row of rows) if (row.what === what || (what === ORDERS && row.what === ORDERS_API_ONLY)) row.pgbench = c;
  }
  if (scripts.orderBatched !== undefined) {
    const c = await pgbench(bin, url, scripts.orderBatched, duration, connections);
    const perOrder = c.rate === null ? null : c.rate * BATCHED_ORDERS;
    batched = `pgbench, the orders row's rows ${BATCHED_ORDERS} orders a transaction and one statement a table (what sending a batch's orders as one statement would cost the database): ${perOrder ?? c.note} orders/s`;
    console.error(batched);
  }
  if (scripts.environmentId === undefined) return;
  const driver = await driverLoop(url, scripts.environmentId, 'user-listed', duration, connections);
  console.error(`pg driver loop ${LIST_ROW}: ${driver.rate} /s (${driver.note})`);
  const list = rows.find((r) => r.what === LIST_ROW);
  if (list) list.driver = driver;
}

async function tenantOf(server: RunningServer, env: NodeJS.ProcessEnv): Promise<DemoTenant> {
  if (server.tenant) return server.tenant;
  const { createTenantViaAdmin } = await import('./admin.ts');
  return createTenantViaAdmin(env);
}

const UNCACHED = 'GET /transactions/users (20 items), LIST_CACHE_MB=0';

/** The list row on a server of its own without the page cache; every read goes to the store. */
async function uncachedList(store: string, env: NodeJS.ProcessEnv, floorBytes: number): Promise<Measured> {
  const server = await startServer({ env: { ...env, LIST_CACHE_MB: '0' }, ...nodeArgs });
  try {
    const headers = headersOf(await tenantOf(server, env));
    await seedListedUser(server.url, headers);
    const reply = await capture(`${server.url}${LIST}`, { headers });
    // The same bytes as the floor's, up to the ids: the same length.
    if (Math.abs(reply.body.length - floorBytes) > 64) throw new Error(`the uncached list answered ${reply.body.length} bytes, the floor ${floorBytes}`);
    await run('warmup', { url: `${server.url}${LIST}`, headers }, 2);
    return await run(`${store} GET /transactions/users (20), LIST_CACHE_MB=0`, { url: `${server.url}${LIST}`, headers }, duration, server.child.pid);
  } finally {
    await server.stop();
  }
}

/** The orders row on a PostgreSQL instance without a delivery worker: its deliveries stay queued. */
async function apiOnlyOrders(store: string, env: NodeJS.ProcessEnv, headers: Record<string, string>): Promise<Measured> {
  const server = await startServer({ env: { ...env, DELIVERY_WORKER: 'off' }, ...nodeArgs });
  try {
    await run('warmup', post(server.url, '/v2/orders', headers, orderBody), 3);
    return await run(`${store} POST /v2/orders, DELIVERY_WORKER=off`, post(server.url, '/v2/orders', headers, orderBody), duration, server.child.pid);
  } finally {
    await server.stop();
  }
}

/** Production's settings, but no rate limit and no response validation; a sealing key on PostgreSQL. */
function baseEnv(store: 'sqlite' | 'postgres'): NodeJS.ProcessEnv {
  return {
    RATE_LIMIT_RPS: '0',
    VALIDATE_RESPONSES: 'false',
    // As production has it; the orders server runs NODE_ENV=test for its loopback endpoint.
    CHECK_NESTED_TRANSACTIONS: 'false',
    LOG_LEVEL: 'warn',
    ...(store === 'postgres' ? { SECRETS_KEY: Buffer.alloc(32, 7).toString('base64url') } : {}),
  };
}

/** The listed user: 25 payouts, so that a page of 20 is full. */
async function seedListedUser(url: string, headers: Record<string, string>): Promise<void> {
  for (let i = 0; i < 25; i++) {
    const r = await capture(`${url}/transactions/payout`, { method: 'POST', headers, body: JSON.stringify({ thirdPartyId: `list-${i}`, userId: 'user-listed', amount: 0.01 }) });
    if (r.status !== 201) throw new Error(`payout: ${r.status} ${r.body}`);
  }
}

/**
 * The payout and list rows on the --baseline commit's server, on a data folder (SQLite) or
 * database (PostgreSQL) of its own, with the same load: the before of the reads in this run.
 */
async function baselineReads(store: 'sqlite' | 'postgres', env: NodeJS.ProcessEnv, rows: Row[]): Promise<void> {
  if (baseline === undefined) return;
  const db = store === 'postgres' ? await (await import('../../server/store/postgres/testing.ts')).createTestDatabase() : null;
  const dataDir = await mkdtemp(path.join(ROOT, 'node_modules', '.cache', 'bench-baseline-'));
  const own = { ...env, ...(db ? { DATABASE_URL: db.url } : {}) };
  const server = await startServer({ env: own, dataDir, program: baseline.program, cwd: baseline.cwd, ...nodeArgs });
  try {
    const headers = headersOf(server.tenant ?? (await baseline.createTenant(own)));
    await seedListedUser(server.url, headers);
    await run('warmup', post(server.url, '/transactions/payout', headers, payoutBody), 3);
    const payout = await run(`${baseline.label} ${store} POST /transactions/payout`, post(server.url, '/transactions/payout', headers, payoutBody), duration, server.child.pid);
    await run('warmup', { url: `${server.url}${LIST}`, headers }, 2);
    const list = await run(`${baseline.label} ${store} GET /transactions/users (20)`, { url: `${server.url}${LIST}`, headers }, duration, server.child.pid);
    for (const r of rows) r.baseline = r.what === PAYOUT ? payout : r.what === LIST_ROW ? list : r.baseline;
  } finally {
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
    await db?.drop();
  }
}

async function benchStore(store: 'sqlite' | 'postgres'): Promise<Row[]> {
  const db = store === 'postgres' ? await (await import('../../server/store/postgres/testing.ts')).createTestDatabase() : null;
  const base = { ...baseEnv(store), ...(db ? { DATABASE_URL: db.url } : {}) };
  const rows: Row[] = [];
  // A loopback receiver for the orders row's deliveries.
  let received = 0;
  const receiver = createServer((req, res) =>
    req.resume().on('end', () => {
      received += 1;
      res.writeHead(204).end();
    }),
  );
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  try {
    // --- payout and list, NODE_ENV=production
    if (ONLY.has('reads')) {
      const env = { ...base, NODE_ENV: 'production' };
      const server = await startServer({ env, ...nodeArgs });
      try {
        const tenant = await tenantOf(server, env);
        const headers = headersOf(tenant);
        const replies: Replies = {
          'POST /transactions/payout': await capture(`${server.url}/transactions/payout`, { method: 'POST', headers, body: payoutBody() }),
        };
        await seedListedUser(server.url, headers);
        await run('warmup', post(server.url, '/transactions/payout', headers, payoutBody), 3);
        replies['GET /transactions/users'] = await capture(`${server.url}${LIST}`, { headers });
        const items = (JSON.parse(replies['GET /transactions/users'].body) as unknown[]).length;
        if (items !== 20) throw new Error(`the list answered ${items} items, not 20`);
        const echo = await startEcho(replies);
        const hono = await startEcho(replies, true);
        try {
          const payout = await run(`${store} POST /transactions/payout`, post(server.url, '/transactions/payout', headers, payoutBody), duration, server.child.pid);
          const payoutFloor = await run('echo POST (same reply)', post(echo.url, '/transactions/payout', headers, payoutBody), duration, echo.pid);
          await run('warmup', post(hono.url, '/transactions/payout', headers, payoutBody), 2);
          const payoutHono = await run('bare Hono POST (same reply)', post(hono.url, '/transactions/payout', headers, payoutBody), duration, hono.pid);
          rows.push({ what: PAYOUT, server: payout, floor: payoutFloor, framework: payoutHono });
          await run('warmup', { url: `${server.url}${LIST}`, headers }, 2);
          const list = await run(`${store} GET /transactions/users (20)`, { url: `${server.url}${LIST}`, headers }, duration, server.child.pid);
          const listFloor = await run('echo GET (same bytes)', { url: `${echo.url}${LIST}`, headers }, duration, echo.pid);
          const listHono = await run('bare Hono GET (same bytes)', { url: `${hono.url}${LIST}`, headers }, duration, hono.pid);
          rows.push({ what: LIST_ROW, server: list, floor: listFloor, framework: listHono });
          // The row above reads one unchanged page again and again, which the store answers
          // from its cache of rendered pages: the same read with the cache off is what a miss costs.
          rows.push({ what: UNCACHED, server: await uncachedList(store, env, replies['GET /transactions/users'].body.length), floor: listFloor });
        } finally {
          echo.stop();
          hono.stop();
        }
      } finally {
        await server.stop();
      }
      await baselineReads(store, env, rows);
    }
    // --- orders: a loopback webhook endpoint, so NODE_ENV=test with insecure URLs allowed
    if (ONLY.has('orders')) {
      const env = { ...base, NODE_ENV: 'test', WEBHOOK_ALLOW_INSECURE_URLS: 'true' };
      const server = await startServer({ env, ...nodeArgs });
      try {
        const tenant = await tenantOf(server, env);
        const headers = headersOf(tenant);
        const management = createManagementClient({ baseUrl: server.url, memberToken: tenant.memberToken });
        const endpoint = await management.POST('/v2/webhooks/endpoints', { body: { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks` } });
        if (endpoint.response.status !== 201) throw new Error(`endpoint: ${endpoint.response.status}`);
        const replies: Replies = { 'POST /v2/orders': await capture(`${server.url}/v2/orders`, { method: 'POST', headers, body: orderBody() }) };
        if (replies['POST /v2/orders']!.status !== 201) throw new Error(`order: ${replies['POST /v2/orders']!.body}`);
        await run('warmup', post(server.url, '/v2/orders', headers, orderBody), 3);
        const echo = await startEcho(replies);
        try {
          const orders = await run(`${store} POST /v2/orders`, post(server.url, '/v2/orders', headers, orderBody), duration, server.child.pid);
          // The floor runs once the server has delivered the webhooks of the run: a backlog
          // drained meanwhile would take its CPU from the echo and flatter the ratio.
          await drained(() => received);
          const floor = await run('echo POST (same reply)', post(echo.url, '/v2/orders', headers, orderBody), duration, echo.pid);
          rows.push({ what: ORDERS, server: orders, floor });
          await server.stop();
          if (db) rows.push({ what: ORDERS_API_ONLY, server: await apiOnlyOrders(store, env, headers), floor });
        } finally {
          echo.stop();
        }
      } finally {
        await server.stop();
      }
    }
    if (db) await ceilings(db.url, rows);
  } finally {
    receiver.close();
    await db?.drop();
  }
  return rows;
}

/** Goals against the echo: issue 58's for SQLite's payout and list, earlier issues' for the rest. */
const GOALS: Record<string, Record<'sqlite' | 'postgres', number>> = {
  [PAYOUT]: { sqlite: 0.55, postgres: 0.2 },
  [LIST_ROW]: { sqlite: 0.8, postgres: 0.35 },
  [ORDERS]: { sqlite: 0.3, postgres: 0.15 },
};

/** Goals for the PostgreSQL rows against PostgreSQL's own ceilings (pg-ceilings.ts): issue 29's, the list's raised by issue 58. */
const CEILING_GOALS: Record<string, { of: 'pgbench' | 'driver'; goal: number }> = {
  [PAYOUT]: { of: 'pgbench', goal: 2 },
  [LIST_ROW]: { of: 'driver', goal: 1.1 },
  [UNCACHED]: { of: 'driver', goal: 0.5 },
  [ORDERS]: { of: 'pgbench', goal: 1 },
  [ORDERS_API_ONLY]: { of: 'pgbench', goal: 1 },
};

/** The baseline's figures of a row beside the echo the row is held to: req/s, ÷ echo, CPU µs. */
const baselineCells = (r: Row): string => (r.baseline ? `${r.baseline.rps}, ${(r.baseline.rps / r.floor.rps).toFixed(3)}, ${r.baseline.cpuUs ?? '?'}` : '–');
/** The framework's floor beside the echo, and the server ÷ it: what the framework costs, and what the server's own steps do. */
const frameworkCells = (r: Row): string =>
  r.framework ? `${r.framework.rps}, ${(r.framework.rps / r.floor.rps).toFixed(3)}, ${r.framework.cpuUs ?? '?'} | ${(r.server.rps / r.framework.rps).toFixed(3)}` : '– | –';
const cpuRatio = (r: Row): string => (r.server.cpuUs && r.floor.cpuUs ? (r.floor.cpuUs / r.server.cpuUs).toFixed(3) : '?');
const verdict = (ratio: number, goal: number | undefined): string => (goal === undefined ? '–' : `≥ ${goal} ${ratio >= goal ? 'met' : 'not met'}`);

/** pgbench and driver figures of a PostgreSQL row, and the row ÷ the one its goal is set against. */
function ceilingCells(r: Row, listRow: Row | undefined): string {
  const c = CEILING_GOALS[r.what];
  // The uncached list is held to the same query's ceilings, measured once for the list row.
  const source = r.what === UNCACHED ? listRow : r;
  const pgb = source?.pgbench;
  const drv = source?.driver;
  const basis = c?.of === 'driver' ? drv : pgb;
  const ratio = basis?.rate ? r.server.rps / basis.rate : null;
  const pgbCell = pgb ? (pgb.rate ?? pgb.note) : '–';
  return `${pgbCell} | ${drv?.rate ?? '–'} | ${ratio === null ? '–' : `${ratio.toFixed(3)} of ${c!.of}`} | ${ratio === null ? '–' : verdict(ratio, c!.goal)} | ${r.server.pgUs ?? '?'}`;
}

// The server as the tests and `npm start` run it: the esbuild bundle, built now from the tree.
await mkdir(path.join(ROOT, 'node_modules', '.cache'), { recursive: true });
const bundlesRun = await mkdtemp(path.join(ROOT, 'node_modules', '.cache', 'bench-bundles-'));
process.on('exit', () => rmSync(bundlesRun, { recursive: true, force: true }));
// A folder inside the run's: the build's own folders are written beside it (server/build/swap.ts).
const bundles = path.join(bundlesRun, 'bundles');
await buildChildBundles(bundles);
process.env[BUNDLE_DIR_VARIABLE] = bundles;

let baseline: Baseline | undefined;
if (values.baseline !== undefined) {
  const { buildPreviousRelease } = await import('../../server/faults/previous-release.ts');
  const commit = execFileSync('git', ['rev-parse', '--verify', `${values.baseline}^{commit}`], { encoding: 'utf8' }).trim();
  const release = await buildPreviousRelease(commit);
  process.on('exit', () => release.remove());
  baseline = {
    label: `baseline ${commit.slice(0, 7)}`,
    program: release.server,
    cwd: release.dir,
    createTenant: async (env) => (await release.runAdmin(['tenant', 'create', '--name', 'Bench'], env)) as DemoTenant,
  };
}

const results: Array<[string, Row[]]> = [];
const floorRows: FloorRow[] = [];
const connectionRows: ConnectionsRow[] = [];
for (const store of stores) {
  if (ONLY.has('reads') || ONLY.has('orders')) results.push([store, await benchStore(store)]);
  const floorSettings = { store, rounds, seconds: duration, connections, env: baseEnv(store), nodeArgs: nodeArgs.nodeArgs ?? [], ...(baseline ? { baseline } : {}) };
  if (ONLY.has('floor')) floorRows.push(...(await ordersAgainstFloor(floorSettings)));
  if (ONLY.has('connections')) connectionRows.push(await ordersUnderConnections(floorSettings));
}

console.log(`\nbench:api on ${machine()}; autocannon, ${connections} connections, ${duration} s per run after a warm-up\n`);
for (const [store, rows] of results) {
  const pgRows = store === 'postgres';
  const old = baseline === undefined ? '' : ` ${baseline.label}: req/s, ratio, CPU µs/req |`;
  console.log(`\n### ${store}\n`);
  console.log(
    `| row | server req/s | p50 ms | p99 ms | errors/non-2xx | floor req/s | floor p99 ms | ratio | goal | CPU µs/req server / floor | CPU ratio | bare Hono req/s, ÷ floor, CPU µs/req | server ÷ Hono |${pgRows ? ' pgbench /s | pg driver /s | ÷ ceiling | goal | PostgreSQL CPU µs/req |' : ''}${old}`,
  );
  console.log(`|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|${pgRows ? '---:|---:|---:|---|---:|' : ''}${old ? '---|' : ''}`);
  const listRow = rows.find((r) => r.what === LIST_ROW);
  for (const r of rows) {
    const ratio = r.server.rps / r.floor.rps;
    const goal = GOALS[r.what]?.[store as 'sqlite' | 'postgres'];
    console.log(
      `| ${r.what} | ${r.server.rps} | ${r.server.p50} | ${r.server.p99} | ${r.server.errors}/${r.server.non2xx} | ${r.floor.rps} | ${r.floor.p99} | ${ratio.toFixed(3)} | ${verdict(ratio, goal)} | ${r.server.cpuUs ?? '?'} / ${r.floor.cpuUs ?? '?'} | ${cpuRatio(r)} | ${frameworkCells(r)} |${pgRows ? ` ${ceilingCells(r, listRow)} |` : ''}${old ? ` ${baselineCells(r)} |` : ''}`,
    );
  }
}
if (batched !== null) console.log(`\n${batched}`);
if (floorRows.length > 0) {
  console.log(`\n### POST /v2/orders against the floor (${rounds} rounds of ${duration} s, ${connections} connections, alternated; medians)\n`);
  console.log(floorTable(floorRows, baseline?.label));
  console.log(`\n### POST /v2/orders to ${fanOutCase()}, beside one endpoint (the same rounds; medians)\n`);
  console.log(fanOutTable(floorRows));
}
if (connectionRows.length > 0) {
  console.log(`\n### POST /v2/orders under 16 and 512 connections (${rounds} rounds of ${duration} s, alternated; medians)\n`);
  console.log(connectionsTable(connectionRows));
}
