// What `listen` and `trigger` print: one line per event forwarded, and the session's notices
// (ready, reconnecting, stopped). Lines go to `out`; errors to `err`. An event is named by the
// first characters of its id (what `resend` takes) and its order's number (what `trigger` prints).
import type { ForwardResult } from './forwarder.ts';

export interface Output {
  out(line: string): void;
  err(line: string): void;
}

export const consoleOutput: Output = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
};

/** Characters of an event id printed: as many as a git short hash. */
export const SHORT_ID = 8;

export function shortId(eventId: string): string {
  return eventId.slice(0, SHORT_ID);
}

/** `14:31:02  order.paid                     5d41402a  ORD-000042  -> 200 [12 ms]` */
export function eventLine(at: number, type: string, eventId: string, order: string, result: ForwardResult): string {
  const time = new Date(at).toISOString().slice(11, 19);
  return `${time}  ${type.padEnd(29)}  ${shortId(eventId)}  ${order.padEnd(10)}  -> ${outcome(result)} [${result.ms} ms]`;
}

/** `  5d41402a -> failed (ECONNREFUSED); trying again in 0.5 s (try 2 of 5)` */
export function retryLine(eventId: string, result: ForwardResult, waitMs: number, nextTry: number, tries: number): string {
  return `  ${shortId(eventId)} -> ${outcome(result)}; trying again in ${(waitMs / 1000).toFixed(1)} s (try ${nextTry} of ${tries})`;
}

function outcome(result: ForwardResult): string {
  return result.status !== null ? `${result.status}` : `failed (${result.error})`;
}
