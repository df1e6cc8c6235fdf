// Plain-text rendering of results: one line per check, the evidence of a failure, and the
// summary table per group. Shared by the runner (terminal) and the JUnit reporter.
import type { CheckResult, CheckStatus, Exchange, GroupSummary, RunReport } from './check.ts';
import { summarize, totals } from './check.ts';

export interface Style {
  ok(s: string): string;
  bad(s: string): string;
  dim(s: string): string;
  bold(s: string): string;
}

export const plainStyle: Style = { ok: (s) => s, bad: (s) => s, dim: (s) => s, bold: (s) => s };

export const ansiStyle: Style = {
  ok: (s) => `\x1b[32m${s}\x1b[39m`,
  bad: (s) => `\x1b[31m${s}\x1b[39m`,
  dim: (s) => `\x1b[2m${s}\x1b[22m`,
  bold: (s) => `\x1b[1m${s}\x1b[22m`,
};

const MARK: Record<CheckStatus, string> = { passed: 'PASS', failed: 'FAIL', skipped: 'SKIP', not_implemented: 'TODO' };

export function statusMark(status: CheckStatus, style: Style = plainStyle): string {
  const mark = MARK[status];
  if (status === 'passed') return style.ok(mark);
  if (status === 'failed') return style.bad(mark);
  return style.dim(mark);
}

/** `PASS receiver.accepts.order.paid.orderPaidExact  Accepts ... (4 ms)` */
export function resultLine(r: CheckResult, style: Style = plainStyle): string {
  const extra = r.status === 'skipped' || r.status === 'not_implemented' ? (r.reason ? `: ${r.reason}` : '') : '';
  return `${statusMark(r.status, style)} ${r.id}  ${r.title}${extra} ${style.dim(`(${r.durationMs} ms)`)}`;
}

/** The evidence of a failure, indented, ready for a terminal or a JUnit `<failure>` body. */
export function failureDetails(r: CheckResult, style: Style = plainStyle): string {
  const lines: string[] = [];
  const f = r.failure;
  if (!f) return '';
  lines.push(`  group: ${r.group}`);
  lines.push(`  why:   ${f.message}`);
  lines.push(`  rule:  ${f.rule.source}`);
  if (f.rule.quote) lines.push(...wrapQuote(f.rule.quote).map((l) => `         ${l}`));
  for (const x of f.exchanges) lines.push(...exchangeLines(x, style));
  for (const n of r.notes) lines.push(`  note:  ${n}`);
  return lines.join('\n');
}

export function exchangeLines(x: Exchange, style: Style = plainStyle): string[] {
  const lines: string[] = [];
  const label = x.label ? ` (${x.label})` : '';
  lines.push(`  sent${label}: ${x.request.method} ${x.request.url}`);
  for (const [k, v] of Object.entries(x.request.headers)) lines.push(`         ${k}: ${oneLine(v)}`);
  const cut = x.request.bodyTruncated ? ', cut' : '';
  lines.push(`         body (${x.request.bodyBytes} bytes${cut}): ${oneLine(x.request.body)}`);
  const res = x.response;
  if (res.status === null) {
    lines.push(`  got:   ${style.bad(`no HTTP answer`)} after ${res.durationMs} ms: ${res.error ?? 'unknown error'}`);
  } else {
    lines.push(`  got:   ${res.status} in ${res.durationMs} ms`);
    const ct = res.headers['content-type'];
    if (ct) lines.push(`         content-type: ${oneLine(ct)}`);
    lines.push(`         body${res.bodyTruncated ? ' (first 2 KiB)' : ''}: ${res.body === '' ? '(empty)' : oneLine(res.body)}`);
  }
  return lines;
}

/** The summary table: one row per group, then the totals. */
export function summaryTable(results: readonly CheckResult[], style: Style = plainStyle): string {
  const groups: GroupSummary[] = summarize(results);
  const t = totals(results);
  const head = ['group', 'passed', 'failed', 'skipped', 'not impl.', 'total'];
  const rows = groups.map((g) => [g.group, g.passed, g.failed, g.skipped, g.not_implemented, g.total].map(String));
  const foot = ['total', t.passed, t.failed, t.skipped, t.not_implemented, t.total].map(String);
  const all = [head, ...rows, foot];
  const widths = head.map((_, i) => Math.max(...all.map((r) => (r[i] ?? '').length)));
  const fmt = (r: string[]): string =>
    r.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join('  ');
  const rule = widths.map((w) => '-'.repeat(w)).join('  ');
  const body = rows.map((r, i) => {
    const line = fmt(r);
    return (groups[i]?.failed ?? 0) > 0 ? style.bad(line) : line;
  });
  return [style.bold(fmt(head)), rule, ...body, rule, style.bold(fmt(foot))].join('\n');
}

/** The closing lines: verdict and how to repeat the run. */
export function verdictLines(report: RunReport, style: Style = plainStyle): string[] {
  const t = totals(report.results);
  const verdict =
    t.failed > 0
      ? style.bad(`${t.failed} of ${t.total} checks failed`)
      : style.ok(`all ${t.passed} executed checks passed`) + (t.skipped + t.not_implemented > 0 ? ` (${t.skipped + t.not_implemented} not run)` : '');
  return [
    `${verdict} in ${(report.durationMs / 1000).toFixed(1)} s`,
    `seed ${report.seed} (repeat this run with --seed ${report.seed})`,
  ];
}

function oneLine(s: string): string {
  // Control characters would garble a terminal; show them escaped.
  return s.replace(/[\u0000-\u001f\u007f]/g, (c) => (c === '\n' ? '\\n' : c === '\r' ? '\\r' : c === '\t' ? '\\t' : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`));
}

function wrapQuote(quote: string, width = 88): string[] {
  const words = `"${quote.trim()}"`.split(/\s+/);
  const lines: string[] = [];
  let line = '';
  for (const w of words) {
    if (line !== '' && line.length + 1 + w.length > width) {
      lines.push(line);
      line = w;
    } else {
      line = line === '' ? w : `${line} ${w}`;
    }
  }
  if (line !== '') lines.push(line);
  return lines;
}
