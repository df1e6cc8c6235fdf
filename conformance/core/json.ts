// The JSON report: everything the terminal shows, in a stable, versioned shape for tools.
import type { CheckResult, GroupSummary, RunReport } from './check.ts';
import type { RuleCoverage } from './coverage.ts';
import { runPassed, summarize, totals } from './check.ts';

export const JSON_REPORT_FORMAT = 'payments-conformance-report/1';

export interface JsonReport {
  format: typeof JSON_REPORT_FORMAT;
  tool: string;
  target: string;
  seed: number;
  /** How to repeat this run. */
  repeat: string;
  startedAt: string;
  finishedAt: string;
  durationMs: number;
  passed: boolean;
  notes: string[];
  totals: Omit<GroupSummary, 'group'>;
  groups: GroupSummary[];
  checks: CheckResult[];
  /** Per rule of the target's scope: covered, not_reached (with the skip reasons) or no_check. */
  coverage: RuleCoverage[];
}

export function toJsonReport(report: RunReport): JsonReport {
  return {
    format: JSON_REPORT_FORMAT,
    tool: report.tool,
    target: report.target,
    seed: report.seed,
    repeat: `${report.tool} ${report.target} --seed ${report.seed} …`,
    startedAt: report.startedAt,
    finishedAt: report.finishedAt,
    durationMs: report.durationMs,
    passed: runPassed(report),
    notes: report.notes,
    totals: totals(report.results),
    groups: summarize(report.results),
    checks: report.results,
    coverage: report.coverage ?? [],
  };
}

export function toJsonText(report: RunReport): string {
  return `${JSON.stringify(toJsonReport(report), null, 2)}\n`;
}
