// The one way tests wait for something that happens in the background (a delivery sent, a
// notification received, a line printed): poll `check` until it gives a truthy value, and past
// the timeout fail naming `what` and what the last look saw, so that a hang reads as a failed
// expectation rather than vitest's bare test timeout. Never a fixed sleep: a sleep either
// wastes its length or, on a slow machine, ends before the thing it waits for.
//
// Not under fake timers (vi.useFakeTimers()): its looks are spaced by setTimeout and its timeout
// read from Date.now(), and a faked clock moves only when the test moves it, so until() would
// wait for ever (then vitest's bare test timeout). It refuses at once instead; under a fake clock
// advance the clock (vi.advanceTimersByTimeAsync) and assert directly.

export interface UntilOptions {
  /** Default 20 s. */
  timeoutMs?: number;
  /** Between two looks; default 20 ms. */
  everyMs?: number;
}

type Truthy<T> = Exclude<T, false | null | undefined | 0 | ''>;

/**
 * Resolves with the first truthy value check() gives; a check that throws counts as a miss
 * (its error is what the timeout reports). Throws `timed out after N ms waiting for <what>;
 * last saw: …` past the timeout, with what() read then. Throws at once under fake timers
 * (setTimeout or Date faked: it would never time out), naming `what`.
 */
export async function until<T>(check: () => T | Promise<T>, what: string | (() => string), opts: number | UntilOptions = {}): Promise<Truthy<T>> {
  if (timersAreFaked()) {
    throw new Error(`until() cannot wait for ${typeof what === 'string' ? what : what()} under fake timers (vi.useFakeTimers()): it would never time out; advance the fake clock and assert, or call vi.useRealTimers() first`);
  }
  const { timeoutMs = 20_000, everyMs = 20 } = typeof opts === 'number' ? { timeoutMs: opts } : opts;
  const started = Date.now();
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value) return value as Truthy<T>;
      last = value;
    } catch (err) {
      last = err;
    }
    if (Date.now() - started > timeoutMs) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${typeof what === 'string' ? what : what()}; last saw: ${describe(last)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

function describe(value: unknown): string {
  if (value instanceof Error) return `${value.name}: ${value.message}`;
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/** vitest's fake timers (@sinonjs/fake-timers) mark each function they install with its `clock`. */
function timersAreFaked(): boolean {
  return 'clock' in globalThis.setTimeout || 'clock' in globalThis.Date;
}
