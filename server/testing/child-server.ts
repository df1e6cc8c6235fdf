// The real server as a child process (server/main.ts) on a free port: for the crash test,
// the multi-instance test and the benchmarks.
import { spawn, type ChildProcess } from 'node:child_process';
import { whenReady } from '../lifecycle/supervision.ts';
import { sinkText } from './secret-sink.ts';
import { rmSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { childEntry } from './server-bundle.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/**
 * The data folders startServer made. A test may restart a server on its folder, or read its
 * database, after stop(); so they go once the test file is done (data-dirs-setup.ts) or the
 * process exits (benchmarks, whose databases reach 100 MB).
 */
const made = new Set<string>();
function removeAtExit(dir: string): void {
  if (made.size === 0) process.once('exit', removeMadeDataDirs);
  made.add(dir);
}

/** Removes the data folders startServer made so far; their servers must have stopped. */
export function removeMadeDataDirs(): void {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
  made.clear();
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

export interface DemoTenant {
  tenantId: string;
  apiKey: string;
  apiHash: string;
  memberToken: string;
  callbackSecret: string;
}

export interface RunningServer {
  url: string;
  child: ChildProcess;
  dataDir: string;
  /** The demo tenant printed on the first start of a fresh data folder, else null. */
  tenant: DemoTenant | null;
  stop(): Promise<void>;
}

export interface StartOptions {
  env?: NodeJS.ProcessEnv;
  /** Reuse a data folder (a restart); default a fresh one. */
  dataDir?: string;
  /** Extra node flags before the script (benchmarks pass --cpu-prof). */
  nodeArgs?: string[];
}

/**
 * Starts `server/main.ts` on a free port; resolves once the server says it is ready over its IPC
 * channel (store open, demo tenant printed; server/main.ts). Not a poll of the port: between
 * freePort() and the child's listen, another test's server may take it, and would answer.
 */
export async function startServer(opts: StartOptions = {}): Promise<RunningServer> {
  const port = await freePort();
  let dataDir = opts.dataDir;
  if (dataDir === undefined) removeAtExit((dataDir = await mkdtemp(path.join(os.tmpdir(), 'bench-'))));
  // node itself on the run's bundle or with tsx's loader, never the tsx CLI: the CLI runs the
  // script in a grandchild, so a SIGKILL to the CLI would leave the real server running.
  const child = spawn(process.execPath, [...(opts.nodeArgs ?? []), ...childEntry('server/main.ts')], {
    cwd: ROOT,
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'warn', NODE_ENV: 'production', ...opts.env },
    // The IPC channel: the ready message, and a server that stops when this process dies
    // (server/main.ts), so a killed test run leaves none behind.
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
  });
  // Unref'd: the channel alone keeps neither process running.
  child.channel?.unref();
  let out = '';
  child.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString()));
  let exited = false;
  child.on('exit', () => (exited = true));
  child.on('close', () => {
    // Its output goes to the run's secrets sink, all but the demo tenant's credentials, which
    // a first start prints once on purpose (the operator's only way to learn them).
    sinkText(`child server ${child.pid}`, out.replace(/Demo tenant created[^\n]*\n\{[\s\S]*?\n\}/g, '[demo tenant credentials]'));
  });
  const url = `http://127.0.0.1:${port}`;
  await whenReady(child, 60_000).catch((err: Error) => {
    throw new Error(`server ${err.message}\n${out}`);
  });
  const m = /Demo tenant created[^\n]*\n(\{[\s\S]*?\n\})/.exec(out);
  return {
    url,
    child,
    dataDir,
    tenant: m?.[1] ? (JSON.parse(m[1]) as DemoTenant) : null,
    stop: () =>
      new Promise((resolve) => {
        if (exited) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

