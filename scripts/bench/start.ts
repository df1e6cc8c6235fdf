// npm run bench:start: how long the server takes to start and what it holds once started, as
// `npm start` runs it now (the dist/ bundle on plain node) and as it ran before (tsx), on the
// embedded store. Four ways, alternated, --runs times each (default 5), medians:
//   - bundle:          node --enable-source-maps dist/server__main.mjs
//   - tsx:             node --import tsx server/main.ts (tsx's loader in the server's process)
//   - npm start's script now: the docs and build checks, then the bundle
//   - npm start's script before: `tsx scripts/docs.ts --if-stale && tsx server/main.ts` (the
//                      tsx CLI, which runs the server in a child of its own)
//   (both by sh, as npm runs them; npm's own process is left out)
// Measured from the spawn: to the first 200 of /readyz, to the "ready" log line; then, at
// ready, the CPU the process group has used and its resident memory (VmRSS summed over the
// group: sh and the tsx CLI count in the npm rows). Every start is a restart on one data
// folder made by an unmeasured first start (migrations and the demo tenant are not timed).
//
//   npm run bench:start [-- --runs 5]
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { DIST_DIR, ROOT, SERVED_PROGRAMS, buildBundles, staleReason } from '../../server/build/bundle.ts';
import { serverNodeArgs } from '../../server/build/layout.ts';
import { freePort, groupCpuSeconds, groupPids, groupRss, machine } from './lib.ts';

interface Way {
  name: string;
  command: string;
  args: string[];
}

interface Start {
  readyzMs: number;
  logMs: number;
  cpuS: number;
  rssMib: number;
}

const BIN = path.join(ROOT, 'node_modules', '.bin');
/** package.json's start script, run by sh as npm runs it (npm itself, about 65 MiB, is left out of both npm rows). */
const START = (JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start;
const WAYS: Way[] = [
  { name: 'bundle (`node dist/server__main.mjs`)', command: process.execPath, args: serverNodeArgs(DIST_DIR) },
  { name: 'tsx (`node --import tsx server/main.ts`)', command: process.execPath, args: ['--import', 'tsx', path.join(ROOT, 'server', 'main.ts')] },
  { name: '`npm start`: its script now (the checks, then the bundle)', command: 'sh', args: ['-c', START] },
  { name: '`npm start`: its script before (`tsx scripts/docs.ts --if-stale && tsx server/main.ts`)', command: 'sh', args: ['-c', 'tsx scripts/docs.ts --if-stale && tsx server/main.ts'] },
];

/** Starts `way` in a process group of its own on dataDir; resolves once /readyz answers 200 and "ready" is logged, then stops it. */
async function startOnce(way: Way, dataDir: string): Promise<Start> {
  const port = await freePort();
  const began = performance.now();
  const child = spawn(way.command, way.args, {
    cwd: ROOT,
    // The pinned Node first, as npm scripts have it.
    env: { ...process.env, PATH: `${BIN}${path.delimiter}${process.env.PATH ?? ''}`, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'info', NODE_ENV: 'production' },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let logMs: number | null = null;
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
    if (logMs === null && /"msg":"ready"/.test(output)) logMs = performance.now() - began;
  });
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  try {
    let readyzMs: number | null = null;
    while (readyzMs === null || logMs === null) {
      if (child.exitCode !== null) throw new Error(`${way.name} exited with ${child.exitCode}:\n${output}`);
      if (readyzMs === null) {
        const status = await fetch(`http://127.0.0.1:${port}/readyz`).then(
          async (r) => (await r.arrayBuffer(), r.status),
          () => 0,
        );
        if (status === 200) readyzMs = performance.now() - began;
      }
      await new Promise((r) => setTimeout(r, 5));
    }
    const pgid = child.pid as number;
    return { readyzMs, logMs, cpuS: groupCpuSeconds(pgid), rssMib: groupRss(pgid).mib };
  } finally {
    await stop(child);
  }
}

async function stop(child: ChildProcess): Promise<void> {
  const pgid = child.pid as number;
  if (child.exitCode === null && child.signalCode === null) {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    process.kill(-pgid, 'SIGTERM');
    await exited;
  }
  for (let i = 0; groupPids(pgid).length > 0 && i < 500; i++) await new Promise((r) => setTimeout(r, 20));
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

const { values } = parseArgs({ options: { runs: { type: 'string', default: '5' } } });
const runs = Number(values.runs);
if (!Number.isInteger(runs) || runs < 1) {
  process.stderr.write('--runs must be a positive integer\n');
  process.exit(2);
}

const stale = await staleReason(DIST_DIR, SERVED_PROGRAMS);
if (stale !== null) await buildBundles(SERVED_PROGRAMS, DIST_DIR);
console.log(`bench:start on ${machine()}, load average ${(await readFile('/proc/loadavg', 'utf8')).split(' ').slice(0, 3).join(' ')}`);

const dataDir = await mkdtemp(path.join(os.tmpdir(), 'bench-start-'));
try {
  // Unmeasured: the data folder (migrations, demo tenant), the API reference, tsx's cache, the page cache.
  for (const way of WAYS) await startOnce(way, dataDir);
  const results = new Map<Way, Start[]>(WAYS.map((w) => [w, []]));
  for (let round = 1; round <= runs; round++) {
    for (const way of WAYS) {
      const s = await startOnce(way, dataDir);
      results.get(way)!.push(s);
      console.log(`round ${round}: ${way.name}: /readyz ${Math.round(s.readyzMs)} ms, logged ${Math.round(s.logMs)} ms, CPU ${s.cpuS.toFixed(2)} s, RSS ${s.rssMib} MiB`);
    }
  }
  console.log(`\n| how it starts (median of ${runs}) | spawn → /readyz 200 | spawn → "ready" logged | CPU to ready | RSS at ready |\n|---|---:|---:|---:|---:|`);
  for (const [way, starts] of results) {
    const m = (pick: (s: Start) => number): number => median(starts.map(pick));
    console.log(`| ${way.name} | ${Math.round(m((s) => s.readyzMs))} ms | ${Math.round(m((s) => s.logMs))} ms | ${m((s) => s.cpuS).toFixed(2)} s | ${m((s) => s.rssMib)} MiB |`);
  }
} finally {
  await rm(dataDir, { recursive: true, force: true });
}
