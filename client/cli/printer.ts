// What `listen` and `trigger` print: one line per event forwarded, and the session's notices
// (ready, reconnecting, stopped). Lines go to `out`; errors to `err`.
import type { ForwardResult } from './forwarder.ts';

export interface Output {
  out(line: string): void;
  err(line: string): void;
}

export const consoleOutput: Output = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
};

/** `2026-11-25 14:31:02  order.paid  <event id>  -> 200 [12 ms]` */
export function eventLine(at: number, type: string, eventId: string, result: ForwardResult): string {
  const time = new Date(at).toISOString().replace('T', ' ').slice(0, 19);
  const outcome = result.status !== null ? `${result.status}` : `failed (${result.error})`;
  return `${time}  ${type.padEnd(29)}  ${eventId}  -> ${outcome} [${result.ms} ms]`;
}
