// `npm run dev` driven from another process (its benchmark and its test): started in a scratch
// copy with any free ports, its events read from its IPC channel (reporter.ts), stopped as
// Ctrl-C stops it.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { DevEvent } from './reporter.ts';

export interface DrivenLoop {
  serverUrl: string;
  mockUrl: string;
  child: ChildProcess;
  /** Everything the loop printed so far. */
  output(): string;
  /** The next event of this type (from now on). */
  next<T extends DevEvent['type']>(type: T): Promise<Extract<DevEvent, { type: T }>>;
  /** Whether an event of this type already arrived. */
  seen(type: DevEvent['type']): boolean;
  /** SIGINT, as Ctrl-C; resolves when the loop exited. */
  stop(): Promise<number | null>;
}

export async function driveLoop(dir: string, env: NodeJS.ProcessEnv = {}): Promise<DrivenLoop> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(dir, 'scripts', 'dev', 'main.ts'), '--base', 'HEAD'], {
    cwd: dir,
    env: { ...process.env, PORT: '0', MOCK_PORT: '0', DATA_DIR: path.join(dir, 'data', 'dev'), NO_COLOR: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  let out = '';
  child.stdout?.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (out += c.toString()));
  const seen = new Set<string>();
  const waiting: Array<{ type: string; resolve: (e: DevEvent) => void }> = [];
  child.on('message', (m: { dev?: DevEvent }) => {
    if (m.dev === undefined) return;
    seen.add(m.dev.type);
    for (const w of waiting.filter((x) => x.type === m.dev?.type)) {
      waiting.splice(waiting.indexOf(w), 1);
      w.resolve(m.dev);
    }
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const next = <T extends DevEvent['type']>(type: T): Promise<Extract<DevEvent, { type: T }>> =>
    Promise.race([
      new Promise<Extract<DevEvent, { type: T }>>((resolve) => waiting.push({ type, resolve: resolve as (e: DevEvent) => void })),
      exited.then((code) => Promise.reject(new Error(`npm run dev exited (${code}) before "${type}":\n${out}`))),
    ]);
  const ready = await next('ready');
  return {
    serverUrl: ready.serverUrl,
    mockUrl: ready.mockUrl,
    child,
    output: () => out,
    next,
    seen: (type) => seen.has(type),
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGINT');
      return exited;
    },
  };
}
