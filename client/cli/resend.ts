// `payments-webhooks resend <id>`: forwards again one of the last events `listen` forwarded
// (kept with its body in the state file), with the same event id, signed anew with the session
// secret, tried again with back-off as listen does. It needs no connection to the service.
import { routeOf, type ResendArgs } from './args.ts';
import { createForwarder, FORWARD_ATTEMPTS, forwardWithRetry } from './forwarder.ts';
import { CliError } from './preflight.ts';
import { eventLine, retryLine, type Output } from './printer.ts';
import { findKept, keep, loadState, saveState } from './state.ts';

export interface ResendDeps {
  output: Output;
  now: () => number;
  sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  signal: AbortSignal;
  fetch?: typeof fetch;
}

/** Resolves when the receiver took the event; a CliError when it did not, or no such event is kept. */
export async function resend(args: ResendArgs, deps: ResendDeps): Promise<void> {
  const state = await loadState(args.statePath);
  let kept;
  try {
    kept = findKept(state, args.id);
  } catch (err) {
    throw new CliError(`${(err as Error).message} (${args.statePath})`);
  }
  const secret = args.secret ?? state.secret;
  if (secret === null) throw new CliError(`no session secret in ${args.statePath}: give --secret or PAYMENTS_WEBHOOK_SECRET`);
  const url = (args.routes ? routeOf(args.routes, kept.type) : null) ?? kept.url;
  const forwarder = createForwarder(secret, { now: deps.now, ...(deps.fetch ? { fetch: deps.fetch } : {}) });
  const result = await forwardWithRetry(forwarder, url, kept.id, kept.body, {
    sleep: deps.sleep,
    signal: deps.signal,
    onRetry: (r, wait, attempt) => deps.output.err(retryLine(kept.id, r, wait, attempt + 1, FORWARD_ATTEMPTS)),
  });
  if (result === null) throw new CliError('stopped before the receiver took the event');
  deps.output.out(eventLine(deps.now(), kept.type, kept.id, 'resent', result));
  // Kept with its new outcome; a listen running beside writes the file whole, so this may be overwritten.
  const latest = await loadState(args.statePath);
  keep(latest, { ...kept, url, status: result.status });
  await saveState(args.statePath, latest);
  if (result.status === null || result.status >= 300) throw new CliError(`the receiver did not take the event (${result.status ?? result.error})`);
}
