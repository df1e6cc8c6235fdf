// The loop's side of the type-checker worker: the errors of the last finished check, and after
// each new one, the errors the change caused (new since the previous check) and those it fixed.
import { Worker } from 'node:worker_threads';
import { ROOT } from '../../lib/specs.ts';
import type { TsError } from './typecheck-worker.ts';

export interface TypecheckReport {
  total: number;
  /** Errors absent from the previous check; all of them on the first. */
  caused: TsError[];
  fixed: number;
  first: boolean;
}

// An error is the same error when it moved a line: code, file and message.
const key = (e: TsError): string => `${e.code} ${e.file} ${e.message}`;
export const formatTsError = (e: TsError): string => `${e.file}:${e.line}:${e.col} TS${e.code}: ${e.message.split('\n')[0]}`;

/** How the loop tells a report: the first check's count, the errors a change caused, or what it fixed. */
export type TypecheckMessage = { kind: 'info'; text: string } | { kind: 'failed'; text: string; errors: string[] } | { kind: 'ok'; text: string };

export function describeTypecheck(r: TypecheckReport): TypecheckMessage {
  if (r.first) return { kind: 'info', text: `type-check: ${r.total} error(s) in the project${r.total === 0 ? '' : ` (${r.caused.slice(0, 5).map(formatTsError).join('; ')})`}` };
  if (r.caused.length > 0) return { kind: 'failed', text: `type-check: ${r.caused.length} error(s) caused by the change (${r.total} in all)`, errors: r.caused.map(formatTsError) };
  return { kind: 'ok', text: `${r.fixed} error(s) fixed, ${r.total} left` };
}

/** Type-checks the project at `root` (its tsconfig.json) now and after every change to its files. */
export function startTypecheck(onReport: (report: TypecheckReport) => void, root = ROOT): { stop(): Promise<void> } {
  const worker = new Worker(new URL('./typecheck-worker.ts', import.meta.url), { workerData: { root } });
  let previous: Set<string> | null = null;
  worker.on('message', ({ errors }: { errors: TsError[] }) => {
    const before = previous;
    const now = new Set(errors.map(key));
    previous = now;
    const caused = before === null ? errors : errors.filter((e) => !before.has(key(e)));
    const fixed = before === null ? 0 : [...before].filter((k) => !now.has(k)).length;
    if (before !== null && caused.length === 0 && fixed === 0) return;
    onReport({ total: errors.length, caused, fixed, first: before === null });
  });
  worker.on('error', (err: Error) => onReport({ total: 1, caused: [{ file: '', line: 0, col: 0, code: 0, message: `the type-checker stopped: ${err.message}` }], fixed: 0, first: false }));
  worker.unref();
  return { stop: () => worker.terminate().then(() => undefined) };
}
