// Catches a store call made from inside a store transaction (a programming error: the inner
// call waits for the batch the outer one holds open, forever). It needs the caller's async
// context, an AsyncLocalStorage. On Node 22 that turns on async_hooks for every promise of
// the process, which costs about a tenth of a request's CPU (docs/benchmarks.md, sixth pass);
// on Node 24 and later it is nearly free. So a store can be opened without it: the server
// does so in production (CHECK_NESTED_TRANSACTIONS), where the test suite, which always runs
// with it, has already ruled the error out.
import { AsyncLocalStorage } from 'node:async_hooks';

/** The open transaction a store call comes from, if the guard is on. */
export interface NestingGuard {
  /** Runs a transaction's body with `scope` as its context. */
  run<T>(scope: { open: boolean }, body: () => T): T;
  /** Throws when the caller runs inside a transaction that is still open. */
  check(): void;
}

export function nestingGuard(on: boolean): NestingGuard {
  if (!on) return { run: (_scope, body) => body(), check: () => undefined };
  const context = new AsyncLocalStorage<{ open: boolean }>();
  return {
    run: (scope, body) => context.run(scope, body),
    check() {
      if (context.getStore()?.open) throw new Error('nested store transaction: use the Tx you were given');
    },
  };
}
