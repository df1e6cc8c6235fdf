// `payments-webhooks listen`: forwards every new event of the key's test environment to a
// local URL, signed with the session secret, one printed line per event. A dropped connection
// or a restarted server is reconnected with back-off, and each reconnection is printed; a
// restart of the command resumes after the last forwarded event (state.ts).
import { generateSecret } from '../webhooks/index.ts';
import type { ListenArgs } from './args.ts';
import { createForwarder } from './forwarder.ts';
import { CliError, checkTestKey, refusal } from './preflight.ts';
import { eventLine, type Output } from './printer.ts';
import { defaultStatePath, loadState, saveState } from './state.ts';
import { describe, openEventStream, StreamEnded, type StreamMessage } from './stream-reader.ts';

export interface ListenDeps {
  output: Output;
  now: () => number;
  /** Waits ms, or less when the signal ends the session. */
  sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  env: NodeJS.ProcessEnv;
  fetch?: typeof fetch;
  /** Silence after which a connection counts as dropped (heartbeats come every 15 s). */
  idleMs?: number;
}

const FIRST_BACKOFF_MS = 500;
const MAX_BACKOFF_MS = 10_000;
const IDLE_MS = 45_000;

/** Back-off before reconnection attempt n (1, 2, ...): 0.5 s, 1 s, 2 s, ... at most 10 s. */
export function backoffMs(attempt: number): number {
  return Math.min(FIRST_BACKOFF_MS * 2 ** (attempt - 1), MAX_BACKOFF_MS);
}

/** Runs until the signal ends it (exit code 0) or the service refuses the key (CliError). */
export async function listen(args: ListenArgs, signal: AbortSignal, deps: ListenDeps): Promise<void> {
  const { output } = deps;
  await checkTestKey(args, deps.fetch);
  const statePath = args.statePath ?? defaultStatePath(args.baseUrl, args.apiKey, deps.env);
  const state = await loadState(statePath);
  state.secret = args.secret ?? state.secret ?? generateSecret();
  await saveState(statePath, state);
  const forwarder = createForwarder(args.forwardTo, state.secret, { now: deps.now, ...(deps.fetch ? { fetch: deps.fetch } : {}) });

  output.out(`Ready! Forwarding test events${args.events.length > 0 ? ` (${args.events.join(', ')})` : ''} to ${args.forwardTo}`);
  output.out(`Your webhook signing secret is ${state.secret} (^C to quit)`);
  if (state.cursor !== null) output.out(`Resuming after the last forwarded event (${statePath})`);

  const forward = async (m: StreamMessage): Promise<void> => {
    const eventId = eventIdOf(m.data);
    const result = await forwarder.forward(eventId, m.data);
    output.out(eventLine(deps.now(), m.event, eventId, result));
    state.cursor = m.id;
    await saveState(statePath, state);
  };

  let attempt = 0;
  while (!signal.aborted) {
    let reason: string;
    try {
      reason = await connectOnce(args, state.cursor, signal, deps, attempt > 0, forward);
    } catch (err) {
      if (err instanceof CliError) throw err;
      if (signal.aborted) break;
      // A connection that was open and dropped starts the back-off again.
      if (err instanceof StreamEnded) attempt = 0;
      reason = err instanceof StreamEnded ? err.message : `cannot reach the service (${describe(err)})`;
    }
    if (signal.aborted) break;
    if (reason === CURSOR_REFUSED) {
      output.err('The saved cursor was not accepted by this service: starting from now.');
      state.cursor = null;
      continue;
    }
    attempt += 1;
    const wait = backoffMs(attempt);
    output.err(`${reason}; reconnecting in ${(wait / 1000).toFixed(1)} s (attempt ${attempt})`);
    await deps.sleep(wait, signal);
  }
  output.out('Stopped.');
}

const CURSOR_REFUSED = 'cursor refused';

/**
 * One connection: forwards its events until the session stops (resolves 'stopped'), or the
 * connection drops (rejects with StreamEnded, or the network error). A stream the service
 * refused resolves with why, or rejects with a CliError when reconnecting cannot fix it.
 */
async function connectOnce(
  args: ListenArgs,
  cursor: string | null,
  signal: AbortSignal,
  deps: ListenDeps,
  reconnecting: boolean,
  forward: (m: StreamMessage) => Promise<void>,
): Promise<string> {
  const opened = await openEventStream({
    connection: args,
    after: cursor,
    types: args.events,
    signal,
    idleMs: deps.idleMs ?? IDLE_MS,
    ...(deps.fetch ? { fetch: deps.fetch } : {}),
  });
  if (!opened.ok) {
    if (opened.status === 400 && cursor !== null && /cursor/.test(opened.problem.detail ?? '')) return CURSOR_REFUSED;
    if (opened.status < 500 && opened.status !== 429) throw refusal(opened.status, opened.problem);
    return `the service answered ${opened.status}`;
  }
  if (reconnecting) deps.output.err('Reconnected.');
  for await (const m of opened.messages) await forward(m);
  return 'stopped';
}

function eventIdOf(data: string): string {
  const id = (JSON.parse(data) as { id?: unknown }).id;
  if (typeof id !== 'string') throw new Error('an event without an id');
  return id;
}
