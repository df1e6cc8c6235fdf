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

/**
 * Runs `start` on a free port; when the port was taken between freePort() and the child's bind
 * (another test's process got it) and `taken(err)` says so, again on another, at most `tries`
 * times. A free port is only free when it is looked at.
 */
export async function withFreePort<T>(
  start: (port: number) => Promise<T>,
  taken: (err: unknown) => boolean,
  { tries = 3, port = freePort }: { tries?: number; port?: () => Promise<number> } = {},
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await start(await port());
    } catch (err) {
      if (attempt >= tries || !taken(err)) throw err;
    }
  }
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
  /** Where the port comes from (default freePort); a test of the retry below gives a taken one first. */
  port?: () => Promise<number>;
  /** How long the child has to say it is ready (default 60 s); past it the child is killed. */
  readyTimeoutMs?: number;
  /** The node arguments that run the server (default childEntry('server/main.ts'): the run's bundle, else tsx): another build, another release's bundle. */
  program?: string[];
  /** Its working folder (default this repository's root). */
  cwd?: string;
}

/** What the child prints when its port was taken before it bound it. */
const PORT_IN_USE = /cannot listen: .*EADDRINUSE/;

/**
 * Starts `server/main.ts` on a free port; resolves once the server says it is ready over its IPC
 * channel (store open, demo tenant printed; server/main.ts). Not a poll of the port: between
 * freePort() and the child's listen, another test's server may take it, and would answer. When
 * that happens the child says so and exits; it is started again on another port (at most three
 * tries), on the same data folder, its first output kept (the demo tenant may be in it).
 */
export async function startServer(opts: StartOptions = {}): Promise<RunningServer> {
  let dataDir = opts.dataDir;
  if (dataDir === undefined) removeAtExit((dataDir = await mkdtemp(path.join(os.tmpdir(), 'bench-'))));
  let earlier = '';
  // A taken port, and the output of the start it failed (the demo tenant may be in it).
  const taken = (err: unknown): boolean => {
    const failure = err as StartFailure;
    earlier = failure.stdout ?? earlier;
    return opts.env?.PORT === undefined && PORT_IN_USE.test(failure.stderr ?? '');
  };
  return withFreePort((port) => startOnce(port, dataDir, opts, earlier), taken, { port: opts.port });
}

type StartFailure = Error & { stdout?: string; stderr?: string; pid?: number };

async function startOnce(port: number, dataDir: string, opts: StartOptions, earlier: string): Promise<RunningServer> {
  // node itself on the run's bundle or with tsx's loader, never the tsx CLI: the CLI runs the
  // script in a grandchild, so a SIGKILL to the CLI would leave the real server running.
  const child = spawn(process.execPath, [...(opts.nodeArgs ?? []), ...(opts.program ?? childEntry('server/main.ts'))], {
    cwd: opts.cwd ?? ROOT,
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'warn', NODE_ENV: 'production', ...opts.env },
    // The IPC channel: the ready message, and a server that stops when this process dies
    // (server/main.ts), so a killed test run leaves none behind.
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  // Unref'd: the channel alone keeps neither process running.
  child.channel?.unref();
  let out = earlier;
  let errText = '';
  child.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString()));
  // Passed on (the test's output), and kept: to tell a taken port from other failures, and for the sink.
  child.stderr?.on('data', (chunk: Buffer) => {
    process.stderr.write(chunk);
    errText += chunk.toString();
  });
  let exited = false;
  child.on('exit', () => (exited = true));
  child.on('close', () => {
    // Its output goes to the run's secrets sink, all but the demo tenant's credentials, which
    // a first start prints once on purpose (the operator's only way to learn them).
    sinkText(`child server ${child.pid}`, out.slice(earlier.length).replace(/Demo tenant created[^\n]*\n\{[\s\S]*?\n\}/g, '[demo tenant credentials]'));
    sinkText(`child server ${child.pid} stderr`, errText);
  });
  const url = `http://127.0.0.1:${port}`;
  await whenReady(child, opts.readyTimeoutMs ?? 60_000).catch((err: Error) => {
    // After an exit its last stderr may still be in the pipe: the pipe's end is awaited (5 s at most).
    return new Promise<never>((_, reject) => {
      const fail = (): void => reject(Object.assign(new Error(`server ${err.message}\n${out}${errText}`), { stdout: out, stderr: errText, pid: child.pid }));
      // A child not ready by the deadline is discarded, not left running beside the retry or the next test.
      if (!exited) child.kill('SIGKILL');
      if (!exited || child.stderr === null || child.stderr.readableEnded) return fail();
      setTimeout(fail, 5_000).unref();
      child.stderr.once('close', fail);
    });
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

