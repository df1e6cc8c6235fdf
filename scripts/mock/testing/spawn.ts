// Test helper: `npm run mock -- <args>` in its own process group, as a developer starts it,
// ready once its banner has listed the paths (the last thing it prints at start).
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { withFreePort } from '../../../server/testing/child-server.ts';
import { until } from '../../../testing/until.ts';
import { ROOT } from '../../lib/specs.ts';

export interface SpawnedMock {
  child: ChildProcess;
  url: string;
  /** Everything printed so far, stdout and stderr. */
  printed(): string;
  /** Resolves once a printed line matches `pattern` (output arrives in chunks). */
  printedLine(pattern: RegExp): Promise<void>;
  /** Sends `signal` to the group and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * package.json's `mock` script, run by this Node without npm in between: the exit code and
 * the signals are the mock's own (npm, killed by a group's signal, would exit before it).
 */
const MOCK_SCRIPT = (() => {
  const [node, ...args] = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: { mock: string } }).scripts.mock.split(' ');
  if (node !== 'node') throw new Error(`package.json's mock script no longer starts with node: ${node}`);
  return args;
})();

/** What the mock prints when its port was taken before it bound it. */
const PORT_IN_USE = /the port is in use/;

/** Started on a free port unless `args` name one (another free port when that one was taken before the mock bound it). */
export async function spawnMock(args: string[], env: NodeJS.ProcessEnv = {}): Promise<SpawnedMock> {
  if (args.includes('--port')) return spawnOnce(args, env);
  return withFreePort((port) => spawnOnce(['--port', String(port), ...args], env), (err) => PORT_IN_USE.test((err as Error).message));
}

async function spawnOnce(args: string[], env: NodeJS.ProcessEnv): Promise<SpawnedMock> {
  const child = spawn(process.execPath, [...MOCK_SCRIPT, ...args], { cwd: ROOT, detached: true, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let printed = '';
  let exitCode: number | null | undefined;
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => {
      exitCode = code;
      resolve(code);
    }),
  );
  child.stdout?.on('data', (c: Buffer) => (printed += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (printed += c.toString()));
  await until(() => exitCode !== undefined || /^ {2}mock-only +GET/m.test(printed), () => `npm run mock -- ${args.join(' ')} printed no banner:\n${printed}`, 60_000);
  if (exitCode !== undefined) throw new Error(`npm run mock exited with ${exitCode}:\n${printed}`);
  return {
    child,
    url: /^mock: (http:\/\/\S+)$/m.exec(printed)?.[1] ?? '',
    printed: () => printed,
    printedLine: async (pattern) => {
      await until(() => pattern.test(printed), () => `no line matching ${pattern} in:\n${printed}`);
    },
    async stop(signal = 'SIGTERM') {
      if (exitCode === undefined && child.pid !== undefined) process.kill(-child.pid, signal);
      return exited;
    },
  };
}
