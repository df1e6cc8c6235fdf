// When the sending thread may be started again after it failed: after a backoff that doubles
// with each failure in a row, and never again after `giveUpAfter` of them (a thread that cannot
// start, such as a bundle missing a chunk, would otherwise fail every attempt it is given).
// An answered attempt ends the run of failures. Meanwhile the attempts are sent in-process.
import type { Timers } from '../../timers.ts';

export interface RestartPolicy {
  /** The wait after the first failure in a row; doubled after each next one. */
  firstMs: number;
  maxMs: number;
  /** Failures in a row after which no thread is started again. */
  giveUpAfter: number;
}

export const THREAD_RESTART: RestartPolicy = { firstMs: 1_000, maxMs: 30_000, giveUpAfter: 5 };

export interface Restarts {
  /** Whether a thread may be started now. */
  allowed(): boolean;
  /** Counts a failure: the wait before the next start (ms), or null once given up. */
  failed(): number | null;
  /** A thread answered: its run of failures is over. */
  answered(): void;
  /** Why no thread is started any more, or null. */
  givenUp(): string | null;
  failures(): number;
  stop(): void;
}

export function createRestarts(policy: RestartPolicy, timers: Timers): Restarts {
  let failures = 0;
  let waiting: unknown = null;
  let givenUp: string | null = null;
  return {
    allowed: () => waiting === null && givenUp === null,
    failed() {
      failures += 1;
      if (failures >= policy.giveUpAfter) {
        // The errors themselves are in the log: /readyz may be public, and they name files.
        givenUp = `the sending thread failed ${failures} times in a row (each logged); webhooks are sent from the API thread`;
        return null;
      }
      const delayMs = Math.min(policy.firstMs * 2 ** (failures - 1), policy.maxMs);
      timers.clearTimeout(waiting);
      waiting = timers.setTimeout(() => {
        waiting = null;
      }, delayMs);
      return delayMs;
    },
    answered() {
      failures = 0;
    },
    givenUp: () => givenUp,
    failures: () => failures,
    stop() {
      timers.clearTimeout(waiting);
      waiting = null;
    },
  };
}
