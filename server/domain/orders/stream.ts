// The live event stream (GET /v2/events/stream): the events of the tenant environment in
// commit order, after a cursor, as they are recorded. It wakes at once on this instance's
// commits (Store.onEventsRecorded) and polls every pollMs for other instances' (and for
// events PostgreSQL held back behind a transaction still running), so an event arrives within
// about pollMs of its commit wherever it was written. Nothing HTTP here: the route frames it.
import { InvalidCursorError } from '../store-errors.ts';
import type { StreamedEvent } from '../store.ts';
import type { Scope, Services } from '../context.ts';
import { AppError } from '../errors.ts';
import { FEED_EVENT_TYPES, type EventType } from '../model.ts';

/** The types the stream carries: order events, the operational events (issue 69) and webhook.test, never payout callbacks. */
export const STREAM_EVENT_TYPES: readonly EventType[] = [...FEED_EVENT_TYPES, 'webhook.test'];

/** How the stream waits; real timers in production, tests may drive their own. */
export interface StreamTimers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const realStreamTimers: StreamTimers = {
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

export interface StreamRequest {
  /** Resume after this cursor; null: from now on. */
  cursor: string | null;
  /** The JSON pointer the cursor came from (/header/last-event-id or /query/after), for a 400. */
  cursorPointer: string;
  /** Only these types; empty: every streamed type. */
  types: readonly EventType[];
  /** Ends the stream: the client went away, or the server is stopping. */
  signal: AbortSignal;
  /** Longest wait before looking again (at most 100 ms). */
  pollMs: number;
  timers: StreamTimers;
}

/** One look at the store: the events found (empty when none came, after waiting up to pollMs). */
export type StreamBatch = StreamedEvent[];

const BATCH = 100;
/** After a wake-up that found nothing yet: this many looks, this often. */
const CHASE_LOOKS = 10;
const CHASE_MS = 10;

/** An open stream: where it starts, and its batches. */
export interface OpenedStream {
  /** The cursor the stream starts after (the one sent, else "now"): a client that keeps it
   * before anything comes resumes without missing what is recorded while it is away. */
  position: string;
  batches: AsyncGenerator<StreamBatch>;
}

/**
 * Opens the stream: checks the cursor (a 400 before anything is streamed) and answers its
 * position and the batches, the first one at once, each later one when events came or pollMs passed.
 */
export async function openEventStream(services: Services, scope: Scope, req: StreamRequest): Promise<OpenedStream> {
  const types = req.types.length > 0 ? req.types : STREAM_EVENT_TYPES;
  const read = (cursor: string): Promise<StreamedEvent[]> =>
    services.store.read((tx) => tx.events.streamAfter(scope.environmentId, { cursor, types, limit: BATCH }));
  let cursor: string;
  let first: StreamedEvent[];
  try {
    cursor = req.cursor ?? (await services.store.read((tx) => tx.events.streamHead(scope.environmentId)));
    first = await read(cursor);
  } catch (e) {
    if (e instanceof InvalidCursorError) {
      throw new AppError('validation-failed', `The request is invalid: ${req.cursorPointer} is not a cursor issued by GET /v2/events/stream.`, {
        errors: [{ pointer: req.cursorPointer, detail: 'is not a valid cursor' }],
      });
    }
    throw e;
  }
  return { position: cursor, batches: follow(services, scope, req, read, cursor, first) };
}

async function* follow(
  services: Services,
  scope: Scope,
  req: StreamRequest,
  read: (cursor: string) => Promise<StreamedEvent[]>,
  cursor: string,
  first: StreamedEvent[],
): AsyncGenerator<StreamBatch> {
  const waker = new Waker(req.timers, req.signal);
  // Subscribed before the next read, so a commit between that read and the wait is not missed.
  const unsubscribe = services.store.onEventsRecorded((environmentId) => {
    if (environmentId === scope.environmentId) waker.wake();
  });
  try {
    let batch = first;
    // Looks left at the short interval: a commit of this instance woke the stream, but its
    // event was not readable yet (PostgreSQL holds it back while an older transaction runs).
    let chasing = 0;
    while (!req.signal.aborted) {
      const last = batch[batch.length - 1];
      if (last) cursor = last.cursor;
      yield batch;
      if (batch.length > 0) chasing = 0;
      // A full batch: more are waiting, read on without waiting.
      if (batch.length < BATCH) {
        const woken = await waker.wait(chasing > 0 ? Math.min(CHASE_MS, req.pollMs) : req.pollMs);
        chasing = woken ? CHASE_LOOKS : Math.max(0, chasing - 1);
      }
      if (req.signal.aborted) return;
      batch = await read(cursor);
    }
  } finally {
    unsubscribe();
    waker.dispose();
  }
}

/** Waits for a wake-up, the poll interval or the end of the stream, whichever comes first. */
class Waker {
  private woken = false;
  private release: (() => void) | null = null;

  constructor(
    private readonly timers: StreamTimers,
    private readonly signal: AbortSignal,
  ) {
    signal.addEventListener('abort', this.onAbort);
  }

  private readonly onAbort = (): void => this.wake();

  wake(): void {
    this.woken = true;
    this.release?.();
  }

  /** Whether a wake-up (rather than the time) ended the wait. */
  async wait(ms: number): Promise<boolean> {
    if (!this.woken && !this.signal.aborted) {
      await new Promise<void>((resolve) => {
        const handle = this.timers.setTimeout(() => this.release?.(), ms);
        this.release = () => {
          this.timers.clearTimeout(handle);
          this.release = null;
          resolve();
        };
      });
    }
    const woken = this.woken;
    this.woken = false;
    return woken;
  }

  dispose(): void {
    this.signal.removeEventListener('abort', this.onAbort);
    this.release?.();
  }
}
