// `POST /v2/orders` against its floor (floor/server.ts), on one store: the real server and the
// floor alternated round after round on copies of the same data (a tenant made by the server,
// and in the endpoint case its active endpoint), each run warmed up, the medians compared. The
// floor writes the same rows with the same durability and sends nothing; the server also signs
// and POSTs every webhook, and the webhooks its receiver got during the measured window are
// reported beside the orders. A third case, the server alone, sends each order to several
// endpoints by type (orders-fan-out.ts). Between rounds the server drains what it still owes,
// so a round never inherits the previous one's backlog. Each round also runs the node:http echo answering
// the floor's bytes (echo.ts): the floor ÷ the echo, beside the floor's CPU an order, says on any
// machine whether the floor is the least a server can do (FLOOR_LEAN).
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { cp, mkdtemp } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { createManagementClient } from '../../client/api.ts';
import { createTestDatabase, type TestDatabase } from '../../server/store/postgres/testing.ts';
import { cpuShare, cpuSnapshot } from './cpu.ts';
import { startEcho } from './echo.ts';
import { freePort, startServer, type DemoTenant, type RunningServer } from './lib.ts';
import { FAN_OUT, fanOutCase, fanOutEndpoints, type EndpointSpec } from './orders-fan-out.ts';

const FLOOR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'floor', 'server.ts');

export interface FloorSettings {
  store: 'sqlite' | 'postgres';
  rounds: number;
  seconds: number;
  connections: number;
  /** Server environment shared with the other rows (rate limit off, log level, secrets key). */
  env: NodeJS.ProcessEnv;
  /** node arguments of the server (a CPU profile), never of the floor. */
  nodeArgs: string[];
  /** Another build of the server measured in the same rounds (--baseline: an earlier commit), on data of its own. */
  baseline?: Baseline;
}

export interface Baseline {
  label: string;
  /** The node arguments that run its server, and its working folder. */
  program: string[];
  cwd: string;
  /** Its admin tool's `tenant create` (this tree's would migrate its database past what it knows). */
  createTenant(env: NodeJS.ProcessEnv): Promise<DemoTenant>;
}

/** One measured run. */
export interface Run {
  rps: number;
  p99: number;
  errors: number;
  non2xx: number;
  /** Node CPU µs per order of the measured process; PostgreSQL's processes per order. */
  cpuUs: number | null;
  pgUs: number | null;
  /** Webhooks the receiver got per second during the window (the floor sends none). */
  webhooks: number;
  /** 2xx answers per second, and requests that got no answer in time (autocannon's timeouts). */
  goodput: number;
  timeouts: number;
  /** The measured process's peak resident memory during the window, above its resident memory before it (MB); null off Linux. */
  rssGrowthMb: number | null;
  /** The server's deliveries per claim and per recorded batch during the window (its /metrics); absent for the floor and echo. */
  batching?: Batching | null;
}

/** Deliveries per claim and per recorded batch (the queue's fixed costs are per statement). */
export interface Batching {
  perClaim: number;
  perBatch: number;
}

/** Lets the bench read the server's /metrics. */
const METRICS_TOKEN = 'orders-floor-bench-metrics-token-0123456789';
const QUEUE_COUNTERS = ['claims', 'claimed', 'record_batches', 'recorded'] as const;

async function queueCounts(url: string): Promise<Record<(typeof QUEUE_COUNTERS)[number], number> | null> {
  const text = await (await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text();
  const pick = (name: string): number | null => {
    const m = new RegExp(`^webhook_queue_${name}_total (\\d+)`, 'm').exec(text);
    return m ? Number(m[1]) : null;
  };
  const values = QUEUE_COUNTERS.map(pick);
  if (values.some((v) => v === null)) return null; // a baseline without these counters
  return Object.fromEntries(QUEUE_COUNTERS.map((k, i) => [k, values[i]!])) as Record<(typeof QUEUE_COUNTERS)[number], number>;
}

function batchingOf(a: Awaited<ReturnType<typeof queueCounts>>, b: Awaited<ReturnType<typeof queueCounts>>): Batching | null {
  if (a === null || b === null || b.claims === a.claims || b.record_batches === a.record_batches) return null;
  const r = (x: number): number => Math.round(x * 10) / 10;
  return { perClaim: r((b.claimed - a.claimed) / (b.claims - a.claims)), perBatch: r((b.recorded - a.recorded) / (b.record_batches - a.record_batches)) };
}

export interface FloorRow {
  store: 'sqlite' | 'postgres';
  /** Active endpoints of the tenant's environment: none, one, or the fan-out's (orders-fan-out.ts, server runs only). */
  endpoints: 0 | 1 | typeof FAN_OUT.length;
  server: Run[];
  floor: Run[];
  /** The node:http echo of the floor's answer, in the same rounds. */
  echo: Run[];
  /** The baseline server's runs, when there is one. */
  baseline: Run[];
  /** Webhooks the receiver got by path over the whole run (the fan-out's: one path an endpoint). */
  receivedByPath?: Record<string, number>;
}

/** The median of a per-run figure over the runs that have it, rounded; null when none has it. */
export function medianOf(runs: readonly Run[], f: (x: Run) => number | null): number | null {
  const xs = runs.map(f).filter((x): x is number => x !== null);
  return xs.length === 0 ? null : Math.round(median(xs));
}

export const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};

/** A loopback receiver that counts what it was sent, in all and by path. */
async function counter(): Promise<{ server: Server; url: string; count: () => number; byPath: Map<string, number> }> {
  let received = 0;
  const byPath = new Map<string, number>();
  const server = createServer((req, res) =>
    req.resume().on('end', () => {
      received += 1;
      byPath.set(req.url ?? '', (byPath.get(req.url ?? '') ?? 0) + 1);
      res.writeHead(204).end();
    }),
  );
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`, count: () => received, byPath };
}

const headersOf = (t: DemoTenant): Record<string, string> => ({ 'content-type': 'application/json', 'x-api-key': t.apiKey, 'x-api-hash': t.apiHash });
let seq = 0;
const orderBody = (): string => JSON.stringify({ merchantReference: `floor-${process.pid}-${seq++}`, amountMinor: 1999 });

/** VmRSS and VmHWM (peak) of a process in MB, from /proc; null off Linux or once it is gone. */
function memory(pid: number | undefined): { rss: number; peak: number } | null {
  if (pid === undefined) return null;
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (field: string): number => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
    return { rss: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024 };
  } catch {
    return null;
  }
}

/** Resets the peak of `pid` to its current resident memory (Linux: writing 5 to clear_refs). */
function resetPeak(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
  } catch {
    // not Linux, or not allowed: the peak is the process's lifetime peak
  }
}

async function load(url: string, headers: Record<string, string>, seconds: number, connections: number, pid: number | undefined, webhooks: () => number): Promise<Run> {
  resetPeak(pid);
  const memBefore = memory(pid);
  const before = cpuSnapshot(pid === undefined ? [] : [pid]);
  const sent = webhooks();
  const result = await autocannon({ url, connections, duration: seconds, requests: [{ method: 'POST', path: '/v2/orders', headers, setupRequest: (req) => ({ ...req, body: orderBody() }) }] });
  const share = cpuShare(before, cpuSnapshot(pid === undefined ? [] : [pid]));
  const memAfter = memory(pid);
  const orders = result.requests.total;
  const rps = Math.round(result.requests.average);
  return {
    rps,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
    cpuUs: share && orders > 0 ? Math.round((share.servers * seconds * 1e6) / orders) : null,
    pgUs: share && orders > 0 ? Math.round((share.postgres * seconds * 1e6) / orders) : null,
    webhooks: Math.round((webhooks() - sent) / seconds),
    goodput: Math.round(result['2xx'] / seconds),
    timeouts: result.timeouts,
    rssGrowthMb: memBefore && memAfter ? Math.round(memAfter.peak - memBefore.rss) : null,
  };
}

/** Resolves once `count` has not moved for half a second (at most 60 s). */
async function settled(count: () => number): Promise<void> {
  for (let last = -1, i = 0; count() !== last && i < 120; i++) {
    last = count();
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** The floor as a child on `data` (a data folder, or PostgreSQL's URL) for the tenant's key; stopped by the caller. */
export async function startFloor(store: FloorSettings['store'], data: string, tenant: Pick<DemoTenant, 'apiKey' | 'apiHash'>): Promise<{ url: string; pid: number | undefined; stop(): Promise<void> }> {
  const port = await freePort();
  const strip = Number(process.versions.node.split('.')[0]) < 23 ? ['--experimental-strip-types'] : [];
  const child = spawn(process.execPath, [...strip, '--no-warnings', FLOOR], {
    env: { ...process.env, STORE: store, PORT: String(port), API_KEY: tenant.apiKey, API_HASH: tenant.apiHash, ...(store === 'postgres' ? { DATABASE_URL: data } : { DB_FILE: path.join(data, 'payments.db') }) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout.once('data', () => resolve());
    child.once('exit', (code) => reject(new Error(`the floor exited with ${code} before it was ready`)));
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  return { url: `http://127.0.0.1:${port}`, pid: child.pid, stop: () => (child.kill('SIGTERM'), exited) };
}

/** The server's data and the floor's copy of it, with a tenant and the endpoints asked for. */
async function prepare(settings: FloorSettings, endpoints: readonly EndpointSpec[], baseline?: Baseline): Promise<{ server: string; floor: string; tenant: DemoTenant; dbs: TestDatabase[] }> {
  const db = settings.store === 'postgres' ? await createTestDatabase() : null;
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'bench-floor-server-'));
  const env = serverEnv(settings, db?.url);
  const server = await startServer({ env, dataDir, ...(baseline ? { program: baseline.program, cwd: baseline.cwd } : {}) });
  try {
    const adminEnv = { ...process.env, ...env, DATA_DIR: dataDir };
    const tenant = server.tenant ?? (baseline ? await baseline.createTenant(adminEnv) : await (await import('./admin.ts')).createTenantViaAdmin(adminEnv));
    const management = createManagementClient({ baseUrl: server.url, memberToken: tenant.memberToken });
    for (const body of endpoints) {
      const created = await management.POST('/v2/webhooks/endpoints', { body });
      if (created.response.status !== 201) throw new Error(`endpoint: ${created.response.status}`);
    }
    await server.stop();
    if (db !== null) {
      const copy = await createTestDatabase(db);
      return { server: db.url, floor: copy.url, tenant, dbs: [db, copy] };
    }
    const floorDir = await mkdtemp(path.join(os.tmpdir(), 'bench-floor-'));
    await cp(dataDir, floorDir, { recursive: true });
    return { server: dataDir, floor: floorDir, tenant, dbs: [] };
  } catch (err) {
    await server.stop();
    throw err;
  }
}

function serverEnv(settings: FloorSettings, databaseUrl: string | undefined): NodeJS.ProcessEnv {
  // A loopback endpoint needs insecure URLs allowed, which NODE_ENV=production refuses.
  return { ...settings.env, NODE_ENV: 'test', WEBHOOK_ALLOW_INSECURE_URLS: 'true', METRICS_TOKEN, ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}) };
}

async function measureServer(settings: FloorSettings, data: string, tenant: DemoTenant, received: () => number, connections = settings.connections, baseline?: Baseline): Promise<Run> {
  const postgres = settings.store === 'postgres';
  const server: RunningServer = await startServer({
    env: serverEnv(settings, postgres ? data : undefined),
    ...(postgres ? {} : { dataDir: data }),
    nodeArgs: settings.nodeArgs,
    ...(baseline ? { program: baseline.program, cwd: baseline.cwd } : {}),
  });
  try {
    await load(server.url, headersOf(tenant), 2, settings.connections, undefined, received);
    await settled(received);
    const counts = await queueCounts(server.url);
    const run = await load(server.url, headersOf(tenant), settings.seconds, connections, server.child.pid, received);
    const batching = batchingOf(counts, await queueCounts(server.url));
    await settled(received);
    return { ...run, batching };
  } finally {
    await server.stop();
  }
}

/** A floor's run, and one of its answers (what the echo replies). */
interface FloorRun {
  run: Run;
  reply: { status: number; body: string };
}

async function measureFloor(settings: FloorSettings, data: string, tenant: DemoTenant, received: () => number): Promise<FloorRun> {
  const floor = await startFloor(settings.store, data, tenant);
  try {
    const answer = await fetch(`${floor.url}/v2/orders`, { method: 'POST', headers: headersOf(tenant), body: orderBody() });
    const reply = { status: answer.status, body: await answer.text() };
    await load(floor.url, headersOf(tenant), 2, settings.connections, undefined, received);
    const run = await load(floor.url, headersOf(tenant), settings.seconds, settings.connections, floor.pid, received);
    // A floor that fails its writes measures nothing.
    if (reply.status !== 201 || run.non2xx > 0 || run.errors > 0) throw new Error(`the floor answered ${reply.status}, then ${run.non2xx} non-2xx and ${run.errors} errors: fix floor/server.ts`);
    return { run, reply };
  } finally {
    await floor.stop();
  }
}

/** The node:http echo answering the floor's bytes, loaded as the floor is. */
async function measureEcho(settings: FloorSettings, reply: FloorRun['reply'], tenant: DemoTenant, received: () => number): Promise<Run> {
  const echo = await startEcho({ 'POST /v2/orders': reply });
  try {
    await load(echo.url, headersOf(tenant), 2, settings.connections, undefined, received);
    return await load(echo.url, headersOf(tenant), settings.seconds, settings.connections, echo.pid, received);
  } finally {
    echo.stop();
  }
}

/** Both cases on one store, each its rounds of server then floor. */
export async function ordersAgainstFloor(settings: FloorSettings): Promise<FloorRow[]> {
  const receiver = await counter();
  const rows: FloorRow[] = [];
  try {
    // FLOOR_ENDPOINTS=1 (a comma list of 0, 1, 4): only those cases, e.g. to compare the queue's batching.
    const only = process.env.FLOOR_ENDPOINTS?.split(',').map(Number);
    for (const endpoints of [[], [{ url: receiver.url }], fanOutEndpoints(receiver.url)].filter((e) => only === undefined || only.includes(e.length))) {
      const fanOut = endpoints.length > 1;
      const data = await prepare(settings, endpoints);
      // An earlier commit may not route by type: the fan-out runs this tree's server alone.
      const old = settings.baseline && !fanOut ? await prepare(settings, endpoints, settings.baseline) : null;
      const row: FloorRow = { store: settings.store, endpoints: endpoints.length as FloorRow['endpoints'], server: [], floor: [], echo: [], baseline: [] };
      try {
        for (let i = 0; i < settings.rounds; i++) {
          row.server.push(await measureServer(settings, data.server, data.tenant, receiver.count));
          if (fanOut) {
            console.error(`${settings.store} orders, ${fanOutCase()}, round ${i + 1}: server ${row.server.at(-1)!.rps}/s, webhooks ${row.server.at(-1)!.webhooks}/s; received by path ${JSON.stringify(Object.fromEntries(receiver.byPath))}`);
            continue;
          }
          const floor = await measureFloor(settings, data.floor, data.tenant, receiver.count);
          row.floor.push(floor.run);
          row.echo.push(await measureEcho(settings, floor.reply, data.tenant, receiver.count));
          if (old) row.baseline.push(await measureServer(settings, old.server, old.tenant, receiver.count, settings.connections, settings.baseline));
          const [s, f, e, b] = [row.server.at(-1)!, row.floor.at(-1)!, row.echo.at(-1)!, row.baseline.at(-1)];
          const bPer = b?.batching ? `, ${b.batching.perClaim} deliveries a claim, ${b.batching.perBatch} a recorded batch, PostgreSQL ${b.pgUs} µs an order` : '';
          const was = b ? `, ${settings.baseline!.label} ${b.rps}/s (${b.cpuUs} µs, webhooks ${b.webhooks}/s${bPer})` : '';
          const per = s.batching ? `, ${s.batching.perClaim} deliveries a claim, ${s.batching.perBatch} a recorded batch, PostgreSQL ${s.pgUs} µs an order` : '';
          console.error(`${settings.store} orders${row.endpoints === 1 ? ', one endpoint' : ''}, round ${i + 1}: server ${s.rps}/s (${s.cpuUs} µs, webhooks ${s.webhooks}/s, ${s.errors} errors, ${s.non2xx} non-2xx${per}), floor ${f.rps}/s (${f.cpuUs} µs), echo ${e.rps}/s (${e.cpuUs} µs), floor ÷ echo ${(f.rps / e.rps).toFixed(2)}${was}`);
        }
      } finally {
        for (const db of [...data.dbs, ...(old?.dbs ?? [])]) await db.drop();
      }
      if (fanOut) row.receivedByPath = Object.fromEntries(receiver.byPath);
      rows.push(row);
    }
  } finally {
    receiver.server.close();
  }
  return rows;
}

/** The server's orders (no endpoint) under few and many connections: goodput, timeouts, memory. */
export interface ConnectionsRow {
  store: 'sqlite' | 'postgres';
  few: Run[];
  many: Run[];
  connections: readonly [number, number];
}

/** Rounds of `few` then `many` connections, on one server's data, alternated. */
export async function ordersUnderConnections(settings: FloorSettings, few = 16, many = 512): Promise<ConnectionsRow> {
  const receiver = await counter();
  const data = await prepare(settings, []);
  const row: ConnectionsRow = { store: settings.store, few: [], many: [], connections: [few, many] };
  try {
    for (let i = 0; i < settings.rounds; i++) {
      row.few.push(await measureServer(settings, data.server, data.tenant, receiver.count, few));
      row.many.push(await measureServer(settings, data.server, data.tenant, receiver.count, many));
      const [a, b] = [row.few.at(-1)!, row.many.at(-1)!];
      console.error(`${settings.store} orders, round ${i + 1}: ${few} connections ${a.goodput}/s (p99 ${a.p99} ms, ${a.timeouts} timeouts, +${a.rssGrowthMb} MB), ${many} connections ${b.goodput}/s (p99 ${b.p99} ms, ${b.timeouts} timeouts, +${b.rssGrowthMb} MB)`);
    }
  } finally {
    for (const db of data.dbs) await db.drop();
    receiver.server.close();
  }
  return row;
}

export function connectionsTable(rows: readonly ConnectionsRow[]): string {
  const lines = [
    '| store | connections | goodput (2xx/s) | p99 ms | timeouts | errors/non-2xx | memory high-water mark, above idle |',
    '|---|---:|---:|---:|---:|---:|---:|',
  ];
  for (const r of rows) {
    for (const [n, runs] of [[r.connections[0], r.few], [r.connections[1], r.many]] as const) {
      const med = (f: (x: Run) => number | null): number | null => {
        const xs = runs.map(f).filter((x): x is number => x !== null);
        return xs.length === 0 ? null : Math.round(median(xs));
      };
      const errors = runs.reduce((a, x) => a + x.errors - x.timeouts, 0);
      const non2xx = runs.reduce((a, x) => a + x.non2xx, 0);
      lines.push(`| ${r.store === 'sqlite' ? 'SQLite' : 'PostgreSQL'} | ${n} | ${med((x) => x.goodput)} | ${med((x) => x.p99)} | ${runs.reduce((a, x) => a + x.timeouts, 0)} | ${errors}/${non2xx} | +${med((x) => x.rssGrowthMb)} MB |`);
    }
    const ratio = median(r.many.map((x) => x.goodput)) / median(r.few.map((x) => x.goodput));
    lines.push(`| | ${r.connections[1]} ÷ ${r.connections[0]} | **${ratio.toFixed(2)}** (goal ≥ ${CONNECTION_GOALS.goodputRatio} ${ratio >= CONNECTION_GOALS.goodputRatio ? 'met' : 'not met'}) | | | | goal ≤ +${CONNECTION_GOALS.rssGrowthMb} MB |`);
  }
  return lines.join('\n');
}

export const CONNECTION_GOALS = { goodputRatio: 1.5, rssGrowthMb: 200 } as const;

/** Goals of issue 58: server ÷ floor, and webhooks ÷ orders with an endpoint. */
export const FLOOR_GOALS = { noEndpoint: 0.75, endpoint: 0.5, webhooksOfOrders: 0.8 } as const;

/**
 * The floor without an endpoint ÷ the node:http echo of its answer, in the same rounds, at which
 * the floor is lean (issue 71): a minimal node:http server writing the same rows with the same
 * durability reached 0.40; a floor below 0.38 flatters the server beside it.
 */
export const FLOOR_LEAN = 0.38;

/** The floor table in markdown, medians of the rounds. */
export function floorTable(rows: readonly FloorRow[], baseline?: string): string {
  const m = medianOf;
  const old = baseline === undefined ? '' : ` ${baseline}: orders/s, ÷ floor, webhooks/s, Node CPU µs |`;
  const lines = [
    `| store | case | floor orders/s | server orders/s | server ÷ floor | goal | webhooks/s during the load (÷ orders) | Node CPU µs per order, floor → server | PostgreSQL CPU µs per order, floor → server | server errors/non-2xx | echo req/s | floor ÷ echo | echo CPU µs per request |${old}`,
    `|---|---|---:|---:|---:|---|---:|---|---|---:|---:|---|---:|${baseline === undefined ? '' : '---|'}`,
  ];
  for (const r of rows.filter((x) => x.endpoints <= 1)) {
    const endpoint = r.endpoints === 1;
    const floor = m(r.floor, (x) => x.rps)!;
    const server = m(r.server, (x) => x.rps)!;
    const ratio = server / floor;
    const goal = endpoint ? FLOOR_GOALS.endpoint : FLOOR_GOALS.noEndpoint;
    const hooks = m(r.server, (x) => x.webhooks)!;
    const perClaim = m(r.server, (x) => x.batching?.perClaim ?? null);
    const batched = perClaim === null ? '' : `; deliveries a claim ${perClaim}, a recorded batch ${m(r.server, (x) => x.batching?.perBatch ?? null)}`;
    const hookCell = endpoint ? `${hooks} (${(hooks / server).toFixed(2)}, goal ≥ ${FLOOR_GOALS.webhooksOfOrders}${batched})` : '–';
    const pg = r.store === 'postgres' ? `${m(r.floor, (x) => x.pgUs)} → ${m(r.server, (x) => x.pgUs)}` : '–';
    const errors = r.server.reduce((a, x) => a + x.errors, 0);
    const non2xx = r.server.reduce((a, x) => a + x.non2xx, 0);
    const echo = m(r.echo, (x) => x.rps)!;
    const lean = floor / echo;
    const leanCell = endpoint ? lean.toFixed(2) : `**${lean.toFixed(2)}** (lean ≥ ${FLOOR_LEAN} ${lean >= FLOOR_LEAN ? 'met' : 'not met'})`;
    const was = r.baseline.length === 0 ? '' : ` ${m(r.baseline, (x) => x.rps)}, ${(m(r.baseline, (x) => x.rps)! / floor).toFixed(2)}, ${endpoint ? m(r.baseline, (x) => x.webhooks) : '–'}, ${m(r.baseline, (x) => x.cpuUs)} |`;
    lines.push(
      `| ${r.store === 'sqlite' ? 'SQLite' : 'PostgreSQL'} | ${endpoint ? 'one endpoint' : 'no endpoint'} | ${floor} | ${server} | **${ratio.toFixed(2)}** | ≥ ${goal} ${ratio >= goal ? 'met' : 'not met'} | ${hookCell} | ${m(r.floor, (x) => x.cpuUs)} → ${m(r.server, (x) => x.cpuUs)} | ${pg} | ${errors}/${non2xx} | ${echo} | ${leanCell} | ${m(r.echo, (x) => x.cpuUs)} |${was}`,
    );
  }
  return lines.join('\n');
}
