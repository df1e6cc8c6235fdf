// Reads the service's live event stream (GET /v2/events/stream, Server-Sent Events) with the
// key's credentials, resuming after a cursor. The stream's first message carries only an id,
// the position it starts after: opening answers it, so a caller can keep it before any event.
// The SSE framing is parsed by eventsource-parser; a connection that stays silent for longer
// than idleMs while it is read (the server sends a heartbeat every 15 s) is taken as dropped,
// so a dead connection is never mistaken for a quiet one. The idle time counts only while the
// reader waits for data: while the caller holds an event (a slow forward), what the server
// sends waits in the socket, and reading it later proves the connection alive.
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import type { Connection } from './args.ts';

export interface StreamMessage {
  /** The cursor to resume after this message. */
  id: string;
  /** The event type. */
  event: string;
  /** The event envelope, byte for byte what a webhook signs and sends. */
  data: string;
}

export interface Problem {
  type?: string;
  title?: string;
  detail?: string;
}

export type OpenResult =
  | {
      ok: true;
      /** The position the stream starts after (its opening message's id): resuming from it misses nothing. */
      position: string;
      messages: AsyncGenerator<StreamMessage>;
      /** Closes the connection, whether or not `messages` was read. */
      close(): Promise<void>;
    }
  | { ok: false; status: number; problem: Problem };

export interface OpenOptions {
  connection: Connection;
  /** Resume after this cursor (sent as Last-Event-ID); null: from now on. */
  after: string | null;
  types: readonly string[];
  signal: AbortSignal;
  /** Longest silence, while the stream is read, before the connection counts as dropped. */
  idleMs: number;
  fetch?: typeof fetch;
  /** What the idle time is measured with (default: the real timers). */
  timers?: IdleTimers;
}

export interface IdleTimers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const realTimers: IdleTimers = {
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/** Why an open stream ended: it never ends on its own. */
export class StreamEnded extends Error {
  override readonly name = 'StreamEnded';
}

/**
 * Opens the stream and reads its opening position. Network failures, and a stream that ends
 * or stays silent before its opening, reject (the caller tells unreachable from dropped).
 */
export async function openEventStream(opts: OpenOptions): Promise<OpenResult> {
  const url = new URL(`${opts.connection.baseUrl}/v2/events/stream`);
  if (opts.types.length > 0) url.searchParams.set('types', opts.types.join(','));
  const headers: Record<string, string> = {
    accept: 'text/event-stream',
    'x-api-key': opts.connection.apiKey,
    'x-api-hash': opts.connection.apiSecret,
    ...(opts.after !== null ? { 'last-event-id': opts.after } : {}),
  };
  // This connection's own controller: the idle watchdog aborts it without ending the session.
  const connection = new AbortController();
  const abort = (): void => connection.abort();
  opts.signal.addEventListener('abort', abort, { once: true });
  let res: Response;
  try {
    res = await (opts.fetch ?? fetch)(url, { headers, signal: connection.signal });
  } catch (err) {
    opts.signal.removeEventListener('abort', abort);
    throw err;
  }
  if (!res.ok || !res.body) {
    opts.signal.removeEventListener('abort', abort);
    return { ok: false, status: res.status, problem: await problemOf(res) };
  }
  const items = itemsOf(res.body, connection, opts, () => opts.signal.removeEventListener('abort', abort));
  const first = await items.next();
  if (first.done || first.value.event !== null) {
    await items.return(undefined);
    throw new StreamEnded('the stream did not open with its position');
  }
  return {
    ok: true,
    position: first.value.id,
    messages: eventsOf(items),
    close: async () => {
      await items.return(undefined);
    },
  };
}

/** A message of the stream: an event, or (event null) a position without an event, as the opening. */
type Item = StreamMessage | { id: string; event: null; data: null };

async function* eventsOf(items: AsyncGenerator<Item>): AsyncGenerator<StreamMessage> {
  for await (const item of items) if (item.event !== null) yield item;
}

async function* itemsOf(body: ReadableStream<Uint8Array>, connection: AbortController, opts: OpenOptions, done: () => void): AsyncGenerator<Item> {
  const queue: Item[] = [];
  // The parser calls onId for every message with an id, at once followed by onEvent when the
  // message has data: an id still pending after the next onId or the end of a feed was a
  // message with an id only.
  let pendingId: string | null = null;
  const flushPosition = (): void => {
    if (pendingId !== null) queue.push({ id: pendingId, event: null, data: null });
    pendingId = null;
  };
  const parser = createParser({
    onId(id) {
      flushPosition();
      pendingId = id;
    },
    onEvent(m: EventSourceMessage) {
      pendingId = null;
      if (m.id !== undefined && m.event !== undefined) queue.push({ id: m.id, event: m.event, data: m.data });
    },
  });
  let silent = false;
  const timers = opts.timers ?? realTimers;
  const reader = body.getReader();
  // The idle timer runs only while this waits for data, never while the caller holds an event.
  const read = async (): Promise<Awaited<ReturnType<typeof reader.read>>> => {
    const watchdog = timers.setTimeout(() => {
      silent = true;
      connection.abort();
    }, opts.idleMs);
    try {
      return await reader.read();
    } finally {
      timers.clearTimeout(watchdog);
    }
  };
  const decoder = new TextDecoder();
  try {
    for (;;) {
      let chunk: Awaited<ReturnType<typeof reader.read>>;
      try {
        chunk = await read();
      } catch (err) {
        if (opts.signal.aborted) return;
        throw new StreamEnded(silent ? `no data for ${opts.idleMs >= 1000 ? `${opts.idleMs / 1000} s` : `${opts.idleMs} ms`}` : `connection lost (${describe(err)})`);
      }
      if (chunk.done) throw new StreamEnded('the server closed the stream');
      parser.feed(decoder.decode(chunk.value, { stream: true }));
      flushPosition();
      while (queue.length > 0) yield queue.shift()!;
    }
  } finally {
    connection.abort();
    done();
  }
}

async function problemOf(res: Response): Promise<Problem> {
  try {
    return (await res.json()) as Problem;
  } catch {
    return {};
  }
}

/** A short reason for a network error (fetch wraps the system error in `cause`). */
export function describe(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  if (cause?.code) return cause.code;
  if (cause?.message) return cause.message;
  return err instanceof Error ? err.message : String(err);
}
