// A step of the operation chain: a check that reads the context, sets what it found, or throws
// (the one error handler answers). The router runs an operation's steps one after another in a
// single handler, without a middleware dispatch and an async frame per step on every request;
// each step is also a Hono middleware of its own (asMiddleware), which is how its tests use it.
import type { Context, MiddlewareHandler } from 'hono';
import type { AppEnv } from '../app-env.ts';

export type Step = (c: Context<AppEnv>) => void | Promise<void>;

export function asMiddleware(step: Step): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    await step(c);
    await next();
  };
}

/** Runs the steps in order, awaiting only those that are asynchronous. */
export async function runSteps(steps: readonly Step[], c: Context<AppEnv>): Promise<void> {
  for (const step of steps) {
    const pending = step(c);
    if (pending !== undefined) await pending;
  }
}
