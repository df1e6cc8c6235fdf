// The server and the mock as child processes. Each runs in a process group of its own (the
// mock runs Prism in its own process), so stopping one stops all of it; every group still running
// when the loop exits, however it exits, is killed.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { whenReady } from '../../server/lifecycle/supervision.ts';
export { freePort } from '../../server/testing/child-server.ts';
import { ROOT, TOOL_ENV } from '../lib/specs.ts';

const STOP_GRACE_MS = 5_000;
const running = new Set<number>();

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // already gone
  }
}

function groupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}

// Stops under way (a replaced process drains in the background): the loop waits for them at exit.
const inflight = new Set<Promise<void>>();
function track(stop: Promise<void>): Promise<void> {
  inflight.add(stop);
  void stop.finally(() => inflight.delete(stop));
  return stop;
}

/** Resolves when every stop begun so far has finished. */
export async function allStopped(): Promise<void> {
  await Promise.all([...inflight]);
}

process.once('exit', () => {
  for (const pid of running) killGroup(pid, 'SIGKILL');
});

export interface Managed {
  pid: number;
  child: ChildProcess;
  /** Resolves when the whole group is gone. */
  stop(): Promise<void>;
}

/** node with tsx's loader (not the tsx CLI, which adds a process), in a group of its own. */
export function spawnTs(script: string, env: NodeJS.ProcessEnv, onOutput: (line: string) => void, ipc = false): Managed {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, script)], {
    cwd: ROOT,
    env: { ...TOOL_ENV, ...env },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe', ...(ipc ? (['ipc'] as const) : [])],
  });
  const pid = child.pid;
  if (pid === undefined) throw new Error(`could not start ${script}`);
  running.add(pid);
  child.channel?.unref();
  // A process being stopped says so and is no news.
  let stopping = false;
  for (const stream of [child.stdout, child.stderr]) {
    let rest = '';
    stream?.on('data', (chunk: Buffer) => {
      const lines = (rest + chunk.toString()).split('\n');
      rest = lines.pop() ?? '';
      for (const line of lines) if (!stopping) onOutput(line);
    });
  }
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stopGroup = async (leader: number): Promise<void> => {
    killGroup(leader, 'SIGTERM');
    const timer = setTimeout(() => killGroup(leader, 'SIGKILL'), STOP_GRACE_MS);
    await exited;
    clearTimeout(timer);
    // The group may outlive its leader (Prism under the mock script); a kill is delivered
    // before its processes are gone, so wait for the group to be empty.
    killGroup(leader, 'SIGKILL');
    for (let waited = 0; groupAlive(leader) && waited < STOP_GRACE_MS; waited += 20) await new Promise((r) => setTimeout(r, 20));
    running.delete(leader);
  };
  let stopped: Promise<void> | undefined;
  return {
    pid,
    child,
    stop() {
      stopping = true;
      stopped ??= track(stopGroup(pid));
      return stopped;
    },
  };
}

/** server/main.ts on a port of its own, ready when it says so (server/lifecycle/supervision.ts). */
export async function startServer(port: number, env: NodeJS.ProcessEnv, onOutput: (line: string) => void): Promise<Managed> {
  const managed = spawnTs('server/main.ts', { ...env, PORT: String(port), HOST: '127.0.0.1' }, onOutput, true);
  try {
    await whenReady(managed.child, 120_000);
  } catch (err) {
    await managed.stop();
    throw new Error(`the server ${(err as Error).message}`);
  }
  return managed;
}
