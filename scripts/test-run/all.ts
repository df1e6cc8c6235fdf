// npm test: the type-check, the dependency rules and vitest, all three at once. The suite mostly
// waits (child servers, PostgreSQL, receivers), so the cores have room for tsc and
// dependency-cruiser beside it, at the lowest priority: about 14 s less than running them
// first. The checks' output is printed whole when each ends (never interleaved with vitest's),
// and the run fails when any of the three fails. Arguments go to vitest (.ci/run passes its
// reporters). The last line says how the cores' time went: this run's, the rest of the
// machine's, idle (machine-cpu.ts).
import { spawn, type ChildProcess } from 'node:child_process';
import { setPriority } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describeCpu, sampleCpu } from './machine-cpu.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The package.json scripts run beside vitest. */
const CHECKS = ['typecheck', 'lint:deps'];

/** `npm run -s NAME`, through the npm that runs this script when there is one. */
function npmRun(name: string): { command: string; args: string[] } {
  const npm = process.env.npm_execpath;
  return npm ? { command: process.execPath, args: [npm, 'run', '-s', name] } : { command: 'npm', args: ['run', '-s', name] };
}

const children = new Set<ChildProcess>();
// Ctrl-C reaches every process of the terminal's group; a signal sent to this one alone is
// passed on, and the run ends once they have (vitest removes its embedded PostgreSQL).
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.on(signal, () => {
    for (const child of children) child.kill(signal);
  });
}

/**
 * The checks take only what the suite leaves of the cores: at the lowest priority, set on npm
 * before it has started the check (npm loads for a few hundred ms first), which inherits it.
 */
function lowerPriority(child: ChildProcess): void {
  if (child.pid === undefined) return;
  try {
    setPriority(child.pid, 19);
  } catch {
    // Not permitted here (or not supported): the check runs at normal priority.
  }
}

/** Runs a check with its output kept, and prints it once the check has ended. Resolves with its success. */
function runCheck(name: string): Promise<boolean> {
  const check = { name, ...npmRun(name) };
  return new Promise((resolve) => {
    const out: Buffer[] = [];
    const child = spawn(check.command, check.args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    children.add(child);
    lowerPriority(child);
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.stderr.on('data', (c: Buffer) => out.push(c));
    child.on('error', (err) => {
      process.stderr.write(`npm test: ${check.name} could not start: ${err.message}\n`);
      resolve(false);
    });
    child.on('close', (code, signal) => {
      const ok = code === 0;
      const text = Buffer.concat(out).toString('utf8').trimEnd();
      process.stdout.write(`\n${check.name}: ${ok ? 'passed' : `failed (${signal ?? `exit ${code}`})`}${text ? `\n${text}` : ''}\n`);
      resolve(ok);
    });
  });
}

/** vitest with this process's terminal; resolves with its success. */
function runVitest(args: string[]): Promise<boolean> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(ROOT, 'node_modules', 'vitest', 'vitest.mjs'), 'run', ...args], { cwd: ROOT, stdio: 'inherit' });
    children.add(child);
    child.on('error', () => resolve(false));
    child.on('close', (code) => resolve(code === 0));
  });
}

const started = sampleCpu();
const [vitestOk, ...checksOk] = await Promise.all([runVitest(process.argv.slice(2)), ...CHECKS.map(runCheck)]);
const ended = sampleCpu();
if (started !== null && ended !== null) process.stdout.write(`\nnpm test ${describeCpu(started, ended)}\n`);
const failed = [...(vitestOk ? [] : ['vitest']), ...CHECKS.filter((_, i) => !checksOk[i])];
if (failed.length > 0) {
  process.stderr.write(`npm test: ${failed.join(', ')} failed\n`);
  process.exit(1);
}
