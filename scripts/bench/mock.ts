// npm run bench:mock: the mock as a frontend team starts it (`npm run mock -- --quiet`, the whole
// process tree), beside a plain `prism mock` of one document (generated/openapi/orders.json),
// in the same run:
//   - time to the first answer: from the spawn to the first 200 of GET /v2/orders/{id} (median
//     of --starts runs);
//   - resident memory of the whole process tree (npm, node, anything they start), summed from
//     /proc once it answers and again after the load;
//   - throughput and p99 of GET /v2/orders/{id}, --connections connections, --rounds rounds
//     alternating between the two, --seconds each.
//
//   npm run bench:mock [-- --starts 3 --rounds 3 --seconds 5 --connections 10] [--stateful [--tenants N]]
// With --stateful the mock is `npm run mock -- --stateful` (no Prism beside it: start and memory only).
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { ROOT, TOOL_ENV, bin } from '../lib/specs.ts';
import { freePort, groupPids, groupRss, machine, summarise, type Summary } from './lib.ts';

const ORDER = '/v2/orders/3f0c9a8e-6b1d-4c2e-9f7a-2d5b8e1c4a90';
const HEADERS = { 'x-api-key': 'pk_test_bench', 'x-api-hash': 'sk_test_bench' };

interface Started {
  child: ChildProcess;
  url: string;
  firstAnswerMs: number;
  stop(): Promise<void>;
}

/** Spawns `command` in a group of its own; resolves at the first 200 of `probe` (with HEADERS). */
async function startTimed(command: string, args: string[], env: NodeJS.ProcessEnv, url: string, probe: string, headers: Record<string, string>): Promise<Started> {
  const began = performance.now();
  const child = spawn(command, args, { cwd: ROOT, env: { ...TOOL_ENV, ...env }, detached: true, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    process.kill(-(child.pid as number), 'SIGTERM');
    await exited;
    for (let i = 0; groupPids(child.pid as number).length > 0 && i < 250; i++) await new Promise((r) => setTimeout(r, 20));
  };
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${command} ${args.join(' ')} exited with ${child.exitCode}: ${stderr}`);
    try {
      const res = await fetch(`${url}${probe}`, { headers });
      await res.arrayBuffer();
      if (res.status === 200) break;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 10));
  }
  return { child, url, firstAnswerMs: Math.round(performance.now() - began), stop };
}

async function startMockTimed(stateful: boolean, tenants: string): Promise<Started> {
  const port = await freePort();
  const args = ['run', 'mock', '--', '--quiet', ...(stateful ? ['--stateful', '--tenants', tenants] : [])];
  const env = { MOCK_PORT: String(port), MOCK_API_KEY: 'pk_test_bench', MOCK_API_HASH: 'sk_test_bench_0123456789abcdefghijklmnopqrstuv' };
  const probe = stateful ? '/healthz' : ORDER;
  return startTimed('npm', args, env, `http://127.0.0.1:${port}`, probe, HEADERS);
}

async function startPrismTimed(): Promise<Started> {
  const port = await freePort();
  const args = ['mock', 'generated/openapi/orders.json', '--host', '127.0.0.1', '--port', String(port)];
  return startTimed(bin('prism'), args, {}, `http://127.0.0.1:${port}`, ORDER, HEADERS);
}

async function load(name: string, url: string, seconds: number, connections: number): Promise<Summary> {
  const result = await autocannon({ url: `${url}${ORDER}`, headers: HEADERS, connections, duration: seconds });
  return summarise(name, result);
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      starts: { type: 'string', default: '3' },
      rounds: { type: 'string', default: '3' },
      seconds: { type: 'string', default: '5' },
      connections: { type: 'string', default: '10' },
      stateful: { type: 'boolean', default: false },
      tenants: { type: 'string', default: '1' },
    },
  });
  const [starts, rounds, seconds, connections] = [values.starts, values.rounds, values.seconds, values.connections].map(Number) as [number, number, number, number];
  console.log(`bench:mock on ${machine()}, load average ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`);

  const firsts = { mock: [] as number[], prism: [] as number[] };
  const rss = { mock: [] as string[], prism: [] as string[] };
  for (let i = 0; i < starts; i++) {
    for (const which of values.stateful ? (['mock'] as const) : (['mock', 'prism'] as const)) {
      const s = which === 'mock' ? await startMockTimed(values.stateful, values.tenants) : await startPrismTimed();
      firsts[which].push(s.firstAnswerMs);
      const m = groupRss(s.child.pid as number);
      rss[which].push(`${m.mib} MiB in ${m.processes} processes`);
      await s.stop();
    }
  }
  console.log(`first answer, median of ${starts}: mock ${median(firsts.mock)} ms (${firsts.mock.join(', ')})${values.stateful ? '' : `; prism mock ${median(firsts.prism)} ms (${firsts.prism.join(', ')})`}`);
  console.log(`resident at the first answer: mock ${rss.mock.join('; ')}${values.stateful ? '' : `; prism mock ${rss.prism.join('; ')}`}`);
  if (values.stateful) return;

  const mock = await startMockTimed(false, values.tenants);
  const prism = await startPrismTimed();
  const rows: Summary[] = [];
  try {
    for (const s of [mock, prism]) await load('warm-up', s.url, 2, connections);
    for (let r = 1; r <= rounds; r++) {
      rows.push(await load(`mock round ${r}`, mock.url, seconds, connections));
      rows.push(await load(`prism round ${r}`, prism.url, seconds, connections));
    }
    const after = { mock: groupRss(mock.child.pid as number), prism: groupRss(prism.child.pid as number) };
    console.log(`resident after the load: mock ${after.mock.mib} MiB in ${after.mock.processes} processes; prism mock ${after.prism.mib} MiB in ${after.prism.processes}`);
  } finally {
    await Promise.all([mock.stop(), prism.stop()]);
  }
  console.log('| run | req/s | p50 ms | p99 ms | errors | non-2xx |\n|---|---:|---:|---:|---:|---:|');
  for (const r of rows) console.log(`| ${r.name} | ${r.rps} | ${r.p50} | ${r.p99} | ${r.errors} | ${r.non2xx} |`);
  const of = (prefix: string): Summary[] => rows.filter((r) => r.name.startsWith(prefix));
  const rps = (xs: Summary[]): number => xs.reduce((a, r) => a + r.rps, 0) / xs.length;
  const p99 = (xs: Summary[]): number => median(xs.map((r) => r.p99));
  console.log(`throughput mock / prism: ${(rps(of('mock')) / rps(of('prism'))).toFixed(2)} (${Math.round(rps(of('mock')))} / ${Math.round(rps(of('prism')))} req/s); p99 median mock ${p99(of('mock'))} ms, prism ${p99(of('prism'))} ms`);
}

await main();
