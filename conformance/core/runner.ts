// Runs checks one after the other (an implementation under test is often a single process
// with one database; ordering keeps the evidence easy to follow) and reports as it goes:
// a live progress line on a terminal, plain lines otherwise, the evidence of every failure,
// then the summary table per group and the seed.
import { performance } from 'node:perf_hooks';
import type { Check, CheckOutcome, CheckResult, RunReport } from './check.ts';
import { ansiStyle, failureDetails, plainStyle, resultLine, summaryTable, verdictLines } from './format.ts';
import type { Style } from './format.ts';
import { coverage, coverageLines } from './coverage.ts';
import type { CatalogueEntry } from './coverage.ts';

export interface Output {
  write(chunk: string): unknown;
  /** A terminal gets the live progress line. */
  isTTY?: boolean;
  /** Terminal width, for cutting the progress line. */
  columns?: number;
}

export interface RunnerOptions {
  tool?: string;
  target: string;
  seed: number;
  out: Output;
  /** No progress line and no line per passed check: failures and the summary only. */
  quiet?: boolean;
  /** Colours on a terminal (default: on when `out.isTTY` and `NO_COLOR` is unset). */
  color?: boolean;
  notes?: string[];
  /** The rules in the target's scope: the summary says which the run covered. */
  catalogue?: readonly CatalogueEntry[];
  signal?: AbortSignal;
  /** Called after each check, for embedding (tests, other tools). */
  onResult?: (result: CheckResult) => void;
}

export const TOOL_NAME = 'payments-conformance';

export async function runChecks(checks: readonly Check[], opts: RunnerOptions): Promise<RunReport> {
  const tty = opts.out.isTTY === true;
  const live = tty && !opts.quiet;
  const style: Style = (opts.color ?? (tty && !process.env.NO_COLOR)) ? ansiStyle : plainStyle;
  const signal = opts.signal ?? new AbortController().signal;
  const startedAt = new Date();
  const started = performance.now();
  const results: CheckResult[] = [];
  const write = (s: string): void => {
    opts.out.write(s);
  };
  const clearLine = (): void => {
    if (live) write('\r\x1b[2K');
  };

  write(`${opts.tool ?? TOOL_NAME} ${opts.target}: ${checks.length} checks, seed ${opts.seed}\n`);
  for (const note of opts.notes ?? []) write(`note: ${note}\n`);

  for (let i = 0; i < checks.length; i++) {
    const check = checks[i] as Check;
    if (live) {
      clearLine();
      const width = Math.max(20, (opts.out.columns ?? 100) - 1);
      const failed = results.filter((r) => r.status === 'failed').length;
      const line = `[${i + 1}/${checks.length}${failed > 0 ? `, ${failed} failed` : ''}] ${check.group} › ${check.title}`;
      write(line.length > width ? `${line.slice(0, width - 1)}…` : line);
    }
    const result = await runOne(check, opts.seed, signal);
    results.push(result);
    opts.onResult?.(result);
    clearLine();
    if (result.status === 'failed') {
      write(`${resultLine(result, style)}\n${failureDetails(result, style)}\n`);
    } else if (!opts.quiet && (!live || result.notes.length > 0)) {
      // Plain output: every check. Live output: only checks with something to say.
      write(`${resultLine(result, style)}\n`);
      for (const n of result.notes) write(`     note: ${n}\n`);
    }
    if (signal.aborted) break;
  }
  clearLine();

  const report: RunReport = {
    tool: opts.tool ?? TOOL_NAME,
    target: opts.target,
    seed: opts.seed,
    startedAt: startedAt.toISOString(),
    finishedAt: new Date().toISOString(),
    durationMs: Math.round(performance.now() - started),
    notes: [...(opts.notes ?? [])],
    results,
    coverage: coverage(opts.catalogue ?? [], results),
  };
  const covered = coverageLines(report.coverage ?? []);
  write(`\n${summaryTable(results, style)}\n\n${covered.length > 0 ? `${covered.join('\n')}\n\n` : ''}${verdictLines(report, style).join('\n')}\n`);
  return report;
}

async function runOne(check: Check, seed: number, signal: AbortSignal): Promise<CheckResult> {
  const started = performance.now();
  let outcome: CheckOutcome;
  try {
    outcome = await check.run({ seed, signal });
  } catch (err) {
    // A crash inside a check is reported as a failure of that check, with what is known.
    outcome = {
      status: 'failed',
      failure: {
        message: `the check could not complete: ${err instanceof Error ? err.message : String(err)}`,
        rule: check.rules[0] ?? { source: 'conformance suite' },
        exchanges: [],
      },
    };
  }
  const base = {
    id: check.id,
    title: check.title,
    target: check.target,
    group: check.group,
    rules: check.rules,
    durationMs: Math.round(performance.now() - started),
  };
  switch (outcome.status) {
    case 'passed':
      return { ...base, status: 'passed', notes: outcome.notes ?? [] };
    case 'failed':
      return { ...base, status: 'failed', failure: outcome.failure, notes: outcome.notes ?? [] };
    case 'skipped':
      return { ...base, status: 'skipped', reason: outcome.reason, notes: outcome.notes ?? [] };
    case 'not_implemented':
      return { ...base, status: 'not_implemented', reason: outcome.reason ?? 'not implemented yet', notes: [] };
  }
}
