// Server-Sent Events framing of the live event stream (domain/orders/stream.ts): an opening
// message with only the stream's position as its id (EventSource keeps it as its last event
// id without dispatching anything), then one message per event (id = cursor, event = type, data = the stored envelope, which is one line of JSON),
// a heartbeat comment when nothing was written for heartbeatMs, and the end of the stream when
// the client goes away or the server stops (so a graceful stop never waits for it).
import type { Clock } from '../domain/clock.ts';
import type { OpenedStream, StreamTimers } from '../domain/orders/stream.ts';

/** How the app's event streams run; one per app (buildApp), shared by its streams. */
export interface EventStreamSettings {
  /** Aborted when the server stops: every open stream ends. */
  shutdown: AbortSignal;
  /** Longest wait between two looks at the store (≤ 100 ms). */
  pollMs: number;
  /** A comment line after this long without a write. */
  heartbeatMs: number;
  timers: StreamTimers;
}

/** A handler's streamed answer: the router sends the Response as it is. */
export class StreamedReply {
  constructor(readonly response: Response) {}
}

export const SSE_HEADERS = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' };

/**
 * The SSE body of a stream. `open` starts the batches for a signal that ends them; the body
 * pulls one batch at a time, so a slow client holds the reads back instead of piling them up.
 */
export function sseBody({ position, batches }: OpenedStream, stop: AbortController, clock: Clock, heartbeatMs: number): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let lastWrite = clock.now();
  let started = false;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (!started) {
        started = true;
        lastWrite = clock.now();
        controller.enqueue(encoder.encode(`: connected\nid: ${position}\n\n`));
        return;
      }
      for (;;) {
        const next = await batches.next();
        if (next.done) {
          controller.close();
          return;
        }
        const text = next.value.map((e) => `id: ${e.cursor}\nevent: ${e.event.type}\ndata: ${e.event.payload}\n\n`).join('');
        const now = clock.now();
        if (text !== '' || now - lastWrite >= heartbeatMs) {
          lastWrite = now;
          controller.enqueue(encoder.encode(text !== '' ? text : ': heartbeat\n\n'));
          return;
        }
      }
    },
    async cancel() {
      stop.abort();
      await batches.return(undefined);
    },
  });
}
