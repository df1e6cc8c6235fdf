// `payments-webhooks listen`: forwards every new event of the key's test environment to a
// local URL (one per event type if asked), signed with the session secret, one printed line per
// event. The session exists once the stream is open: its opening position is saved before
// `Ready!`, so an event recorded while listen is stopped is forwarded by the next run, even if
// none had come yet. A dropped connection or a restarted server is reconnected with back-off,
// and each reconnection is printed; a failed forward is tried again (forwarder.ts) and kept for
// `resend`.
import { generateSecret } from '../webhooks/index.ts';
import { routeOf, type ListenArgs } from './args.ts';
import { createForwarder, FORWARD_ATTEMPTS, forwardWithRetry } from './forwarder.ts';
import { createOrderLabels } from './order-label.ts';
import { CliError, checkTestKey, refusal } from './preflight.ts';
import { eventLine, retryLine, type Output } from './printer.ts';
import { defaultStatePath, keep, loadState, saveState, type ListenState } from './state.ts';
import { describe, openEventStream, StreamEnded, type IdleTimers, type StreamMessage } from './stream-reader.ts';

export interface ListenDeps {
  output: Output;
  now: () => number;
  /** Waits ms, or less when the signal ends the session. */
  sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  env: NodeJS.ProcessEnv;
  fetch?: typeof fetch;
  /** Silence, while the stream is read, after which a connection counts as dropped (heartbeats come every 15 s). */
  idleMs?: number;
  /** What the idle time is measured with (default: the real timers). */
  timers?: IdleTimers;
}

const FIRST_BACKOFF_MS = 500;
const MAX_BACKOFF_MS = 10_000;
const IDLE_MS = 45_000;

/** Back-off before reconnection attempt n (1, 2, ...): 0.5 s, 1 s, 2 s, ... at most 10 s. */
export function backoffMs(attempt: number): number {
  return Math.min(FIRST_BACKOFF_MS * 2 ** (attempt - 1), MAX_BACKOFF_MS);
}

/** Runs until the signal ends it (exit code 0) or the service refuses the key (CliError). */
export async function listen(args: ListenArgs, outer: AbortSignal, deps: ListenDeps): Promise<void> {
  const { output } = deps;
  await checkTestKey(args, deps.fetch);
  const statePath = args.statePath ?? defaultStatePath(args.baseUrl, args.apiKey, deps.env);
  const state = await loadState(statePath);
  const resuming = state.cursor !== null;
  // A secret given by option or setting is the merchant's: used, never written to the file.
  if (args.secret === null) state.secret ??= generateSecret();
  const secret = args.secret ?? state.secret!;
  // --print-secret ends the session once it is open.
  const printed = new AbortController();
  const signal = AbortSignal.any([outer, printed.signal]);

  let ready = false;
  const onOpen = async (position: string): Promise<void> => {
    // A fresh session (or one whose cursor the service refused) starts at the opening.
    const fresh = state.cursor === null;
    state.cursor ??= position;
    if (fresh || !ready) await saveState(statePath, state);
    if (ready) return;
    ready = true;
    if (args.printSecret) {
      output.out(secret);
      printed.abort();
      return;
    }
    output.out(`Ready! Forwarding ${routesText(args)}`);
    output.out(`Your webhook signing secret is ${secret} (^C to quit)`);
    if (resuming) output.out(`Resuming after the last forwarded event (${statePath})`);
  };
  const forward = createEventForwarder(args, state, statePath, secret, signal, deps);

  await reconnecting(args, state, signal, deps, onOpen, forward);
  if (!args.printSecret) output.out('Stopped.');
}

/** `order.paid to <url>, the others to <url>`, or `test events to <url>`. */
function routesText(args: ListenArgs): string {
  const routes = Object.entries(args.routes.byType).map(([type, url]) => `${type} to ${url}`);
  if (args.routes.fallback === null) return routes.join(', ');
  const others = routes.length > 0 ? 'the others' : args.events.length > 0 ? args.events.join(', ') : 'test events';
  return [...routes, `${others} to ${args.routes.fallback}`].join(', ');
}

/** Forwards one message (with retries), prints its line, keeps it, and moves the cursor past it. */
function createEventForwarder(args: ListenArgs, state: ListenState, statePath: string, secret: string, signal: AbortSignal, deps: ListenDeps): (m: StreamMessage) => Promise<void> {
  const forwarder = createForwarder(secret, { now: deps.now, ...(deps.fetch ? { fetch: deps.fetch } : {}) });
  const labelOf = createOrderLabels(args, deps.fetch);
  return async (m) => {
    const eventId = eventIdOf(m.data);
    // The stream carries only routed types (args.ts), so there is a URL.
    const url = routeOf(args.routes, m.event)!;
    const [order, result] = await Promise.all([
      labelOf(m.data),
      forwardWithRetry(forwarder, url, eventId, m.data, {
        sleep: deps.sleep,
        signal,
        onRetry: (r, wait, attempt) => deps.output.err(retryLine(eventId, r, wait, attempt + 1, FORWARD_ATTEMPTS)),
      }),
    ]);
    // Stopped while waiting to try again: the cursor stays before it, the next run forwards it.
    if (result === null) return;
    deps.output.out(eventLine(deps.now(), m.event, eventId, order, result));
    state.cursor = m.id;
    keep(state, { id: eventId, type: m.event, body: m.data, url, status: result.status });
    await saveState(statePath, state);
  };
}

/** Connects, and connects again with back-off, until the signal ends the session or a CliError. */
async function reconnecting(
  args: ListenArgs,
  state: ListenState,
  signal: AbortSignal,
  deps: ListenDeps,
  onOpen: (position: string) => Promise<void>,
  forward: (m: StreamMessage) => Promise<void>,
): Promise<void> {
  let attempt = 0;
  while (!signal.aborted) {
    let reason: string;
    try {
      reason = await connectOnce(args, state.cursor, signal, deps, attempt > 0, onOpen, forward);
    } catch (err) {
      if (err instanceof CliError) throw err;
      if (signal.aborted) break;
      // A connection that was open and dropped starts the back-off again.
      if (err instanceof StreamEnded) attempt = 0;
      reason = err instanceof StreamEnded ? err.message : `cannot reach the service (${describe(err)})`;
    }
    if (signal.aborted) break;
    if (reason === CURSOR_REFUSED) {
      deps.output.err('The saved cursor was not accepted by this service: starting from now.');
      state.cursor = null;
      continue;
    }
    attempt += 1;
    const wait = backoffMs(attempt);
    deps.output.err(`${reason}; reconnecting in ${(wait / 1000).toFixed(1)} s (attempt ${attempt})`);
    await deps.sleep(wait, signal);
  }
}

const CURSOR_REFUSED = 'cursor refused';

/**
 * One connection: tells its opening position, then forwards its events until the session stops
 * (resolves 'stopped'), or the connection drops (rejects with StreamEnded, or the network
 * error). A stream the service refused resolves with why, or rejects with a CliError when
 * reconnecting cannot fix it (401, 403 without orders_read, ...).
 */
async function connectOnce(
  args: ListenArgs,
  cursor: string | null,
  signal: AbortSignal,
  deps: ListenDeps,
  reconnecting: boolean,
  onOpen: (position: string) => Promise<void>,
  forward: (m: StreamMessage) => Promise<void>,
): Promise<string> {
  const opened = await openEventStream({
    connection: args,
    after: cursor,
    types: args.events,
    signal,
    idleMs: deps.idleMs ?? IDLE_MS,
    ...(deps.fetch ? { fetch: deps.fetch } : {}),
    ...(deps.timers ? { timers: deps.timers } : {}),
  });
  if (!opened.ok) {
    if (opened.status === 400 && cursor !== null && /cursor/.test(opened.problem.detail ?? '')) return CURSOR_REFUSED;
    if (opened.status < 500 && opened.status !== 429) throw refusal(opened.status, opened.problem);
    return `the service answered ${opened.status}`;
  }
  if (reconnecting) deps.output.err('Reconnected.');
  await onOpen(opened.position);
  if (signal.aborted) {
    await opened.close();
    return 'stopped';
  }
  for await (const m of opened.messages) {
    // Stopped (while a forward waited to try again, say): an event already read must not be
    // forwarded, or the cursor would pass the one left unforwarded.
    if (signal.aborted) break;
    await forward(m);
  }
  return 'stopped';
}

/** The envelope's id (the stream's data is the event envelope). */
export function eventIdOf(data: string): string {
  const id = (JSON.parse(data) as { id?: unknown }).id;
  if (typeof id !== 'string') throw new Error('an event without an id');
  return id;
}
