// Each fault test reports what was lost (must be 0), duplicated, and what callers saw, as one
// line on stdout (`fault-report {...}`) and, with FAULT_REPORT=file, appended to that file as
// JSON lines: docs/reliability.md is written from these figures.
import { appendFileSync } from 'node:fs';

export interface FaultReport {
  fault: string;
  measured: string;
  lost: number;
  duplicated?: number | string;
  /** Status code (or outcome) → count, as callers saw it. */
  callerSaw: Record<string, number | string>;
  notes?: string;
}

export function report(r: FaultReport): void {
  const line = JSON.stringify(r);
  process.stdout.write(`fault-report ${line}\n`);
  if (process.env.FAULT_REPORT) appendFileSync(process.env.FAULT_REPORT, `${line}\n`);
}

/** Tallies answers by status (or any label). */
export function tally(): { add(label: string | number): void; counts: Record<string, number> } {
  const counts: Record<string, number> = {};
  return {
    counts,
    add(label) {
      counts[String(label)] = (counts[String(label)] ?? 0) + 1;
    },
  };
}

/** Long fault tests run by default; FAULTS=quick skips those marked long. */
export const LONG_FAULTS = process.env.FAULTS !== 'quick';
