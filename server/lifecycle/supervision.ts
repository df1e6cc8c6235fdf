// The IPC channel between server/main.ts and a process that started it (npm run start:cluster,
// the test harness): the instance says when it is ready, and stops when its supervisor is gone.
// Ready is not a poll of the port: /healthz answers while the store is still opening, and a
// port that another process holds answers for it.
import type { ChildProcess } from 'node:child_process';

interface ReadyMessage {
  state: 'ready';
}

const READY: ReadyMessage = { state: 'ready' };

/** In the instance: tells a supervisor, if one holds a channel, that it is ready. */
export function announceReady(): void {
  process.send?.(READY);
}

/**
 * In the instance: calls `stop` when the supervisor's channel closes, which it does however the
 * supervisor dies (SIGKILL too). Unref'd: the channel alone does not keep the process running.
 */
export function stopWithSupervisor(stop: () => void): void {
  if (!process.channel) return;
  process.once('disconnect', stop);
  process.channel.unref();
}

/**
 * In the supervisor: resolves when `child` (spawned with an 'ipc' stdio entry) says it is
 * ready; rejects with "exited (…) before it was ready" or "was not ready within N s".
 */
export function whenReady(child: ChildProcess, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => done(new Error(`was not ready within ${timeoutMs / 1000} s`)), timeoutMs);
    const onMessage = (m: unknown): void => {
      if ((m as Partial<ReadyMessage> | null)?.state === READY.state) done(null);
    };
    const onExit = (code: number | null, signal: NodeJS.Signals | null): void => done(new Error(`exited (${signal ?? code}) before it was ready`));
    function done(err: Error | null): void {
      clearTimeout(timer);
      child.off('message', onMessage).off('exit', onExit);
      if (err) reject(err);
      else resolve();
    }
    if (child.exitCode !== null || child.signalCode !== null) return onExit(child.exitCode, child.signalCode);
    child.on('message', onMessage).once('exit', onExit);
  });
}
