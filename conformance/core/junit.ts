// JUnit XML, as CI systems read it: <testsuites> with one <testsuite> per group and one
// <testcase> per check; a failed check has a <failure> (message, rule, evidence), a skipped or
// not implemented one a <skipped>. The seed is a property of every suite so a CI failure can
// be repeated locally.
import type { CheckResult, RunReport } from './check.ts';
import { summarize, totals } from './check.ts';
import { failureDetails } from './format.ts';

export function toJUnitXml(report: RunReport): string {
  const t = totals(report.results);
  const out: string[] = [];
  out.push('<?xml version="1.0" encoding="UTF-8"?>');
  out.push(
    `<testsuites ${attrs({
      name: `${report.tool} ${report.target}`,
      tests: t.total,
      failures: t.failed,
      errors: 0,
      skipped: t.skipped + t.not_implemented,
      time: seconds(report.durationMs),
      timestamp: report.startedAt,
    })}>`,
  );
  let index = 0;
  for (const group of summarize(report.results)) {
    const cases = report.results.filter((r) => r.group === group.group);
    out.push(
      `  <testsuite ${attrs({
        name: `${report.target}: ${group.group}`,
        id: index++,
        package: report.target,
        tests: group.total,
        failures: group.failed,
        errors: 0,
        skipped: group.skipped + group.not_implemented,
        time: seconds(group.durationMs),
        timestamp: report.startedAt,
      })}>`,
    );
    out.push('    <properties>');
    out.push(`      <property ${attrs({ name: 'seed', value: report.seed })}/>`);
    out.push(`      <property ${attrs({ name: 'target', value: report.target })}/>`);
    for (const note of report.notes) out.push(`      <property ${attrs({ name: 'note', value: note })}/>`);
    // The run's rule coverage, once (in the first suite).
    for (const c of index === 1 ? (report.coverage ?? []) : []) {
      const why = c.status === 'covered' ? `${c.checks.length} checks` : c.reasons.join('; ');
      out.push(`      <property ${attrs({ name: `coverage ${c.status}`, value: `${c.document}: ${c.rule} (${why})` })}/>`);
    }
    out.push('    </properties>');
    for (const r of cases) out.push(...testcase(r, report.target));
    out.push('  </testsuite>');
  }
  out.push('</testsuites>');
  return `${out.join('\n')}\n`;
}

function testcase(r: CheckResult, target: string): string[] {
  const open = `    <testcase ${attrs({ name: `${r.id}: ${r.title}`, classname: `${target}.${r.group}`, time: seconds(r.durationMs) })}`;
  const inner: string[] = [];
  if (r.status === 'failed' && r.failure) {
    inner.push(
      `      <failure ${attrs({ message: r.failure.message, type: r.failure.rule.source })}>${text(failureDetails(r))}</failure>`,
    );
  } else if (r.status === 'skipped') {
    inner.push(`      <skipped ${attrs({ message: r.reason ?? 'skipped' })}/>`);
  } else if (r.status === 'not_implemented') {
    inner.push(`      <skipped ${attrs({ message: `not implemented: ${r.reason ?? 'not implemented yet'}` })}/>`);
  }
  const out = [
    `rules: ${r.rules.map((rule) => rule.source).join('; ')}`,
    ...r.notes.map((n) => `note: ${n}`),
  ];
  inner.push(`      <system-out>${text(out.join('\n'))}</system-out>`);
  return [`${open}>`, ...inner, '    </testcase>'];
}

function seconds(ms: number): string {
  return (ms / 1000).toFixed(3);
}

function attrs(values: Record<string, string | number>): string {
  return Object.entries(values)
    .map(([k, v]) => `${k}="${attr(String(v))}"`)
    .join(' ');
}

// Characters XML 1.0 cannot carry at all (most control characters, lone surrogates,
// U+FFFE/U+FFFF) are written as a visible `\uXXXX` instead.
const NOT_XML_CHAR = /[^\t\n\r\x20-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;

function clean(s: string): string {
  return s.replace(NOT_XML_CHAR, (c) => `\\u${(c.codePointAt(0) ?? 0).toString(16).padStart(4, '0')}`);
}

/** Escapes element text. */
export function text(s: string): string {
  return clean(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** Escapes an attribute value (double-quoted); line breaks and tabs survive as references. */
export function attr(s: string): string {
  return clean(s)
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;')
    .replace(/\n/g, '&#10;')
    .replace(/\r/g, '&#13;')
    .replace(/\t/g, '&#9;');
}
