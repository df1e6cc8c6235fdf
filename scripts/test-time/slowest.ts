// Where the suite's time goes: the slowest test files of a run, with their seconds (wall time
// of the file: import, hooks and tests). Both a vitest reporter (the end of every `npm test`
// and of each CI run) and `npm run test:slow`, which reads the JSON reports a run left in
// test-results/ (`vitest run --reporter=json --outputFile.json=…`, as .ci/run writes them).
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Reporter, TestModule } from 'vitest/node';

export const SHOWN = 15;

export interface FileTime {
  file: string;
  project: string;
  seconds: number;
  tests: number;
  /** CPU seconds of the worker process during the file (its in-process part), when recorded. */
  cpuSeconds?: number;
  /** CPU seconds of the file's child processes that exited during it, when recorded (Linux). */
  childCpuSeconds?: number;
}

/** The `count` slowest, slowest first, as lines of a table. */
export function formatSlowest(files: readonly FileTime[], count = SHOWN): string {
  const slowest = [...files].sort((a, b) => b.seconds - a.seconds).slice(0, count);
  const total = files.reduce((sum, f) => sum + f.seconds, 0);
  const cpu = files.reduce((sum, f) => sum + (f.cpuSeconds ?? 0), 0);
  const childCpu = files.reduce((sum, f) => sum + (f.childCpuSeconds ?? 0), 0);
  const counted = files.some((f) => f.childCpuSeconds !== undefined);
  const cpuOf = (f: FileTime): string => (f.cpuSeconds === undefined ? '' : `${f.cpuSeconds.toFixed(1).padStart(6)} s CPU  `);
  const childOf = (f: FileTime): string => (counted ? `${(f.childCpuSeconds ?? 0).toFixed(1).padStart(6)} s children  ` : '');
  const lines = slowest.map((f) => `${f.seconds.toFixed(1).padStart(7)} s  ${cpuOf(f)}${childOf(f)}${f.project.padEnd(9)} ${f.file} (${f.tests} tests)`);
  const childNote = counted ? `, their child processes' ${childCpu.toFixed(0)} s` : ', child processes not counted';
  const cpuNote = cpu > 0 ? `; the workers' own CPU ${cpu.toFixed(0)} s${childNote}` : '';
  return [`slowest ${slowest.length} of ${files.length} test files (file seconds add up to ${total.toFixed(0)} s${cpuNote}):`, ...lines].join('\n');
}

/** CPU seconds a file cost: its worker's and its children's. */
function cpuCost(f: FileTime): number {
  return (f.cpuSeconds ?? 0) + (f.childCpuSeconds ?? 0);
}

/**
 * The `count` files that cost the most CPU (worker and children), costliest first; empty when
 * the run recorded none. On a machine whose cores the run keeps busy, these are what to cut.
 */
export function formatCostliest(files: readonly FileTime[], count = SHOWN): string {
  if (!files.some((f) => f.cpuSeconds !== undefined)) return '';
  const costliest = [...files].sort((a, b) => cpuCost(b) - cpuCost(a)).slice(0, count);
  const total = files.reduce((sum, f) => sum + cpuCost(f), 0);
  const lines = costliest.map((f) => `${cpuCost(f).toFixed(1).padStart(7)} s CPU  ${f.seconds.toFixed(1).padStart(6)} s  ${f.project.padEnd(9)} ${f.file} (${f.tests} tests)`);
  return [`costliest ${costliest.length} in CPU, worker and children (all files: ${total.toFixed(0)} s):`, ...lines].join('\n');
}

/** A vitest reporter that prints formatSlowest() and formatCostliest() once the run ends. */
export default class SlowestFilesReporter implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    const files = modules.map((m) => ({
      file: m.relativeModuleId,
      project: m.project.name,
      // Import and setup, then every test and hook.
      seconds: (m.diagnostic().collectDuration + m.diagnostic().setupDuration + m.diagnostic().duration) / 1000,
      tests: [...m.children.allTests()].length,
      ...(m.meta().cpuSeconds === undefined ? {} : { cpuSeconds: m.meta().cpuSeconds }),
      ...(m.meta().childCpuSeconds === undefined ? {} : { childCpuSeconds: m.meta().childCpuSeconds }),
    }));
    if (files.length === 0) return;
    process.stdout.write(`\n${formatSlowest(files)}\n`);
    const costliest = formatCostliest(files);
    if (costliest) process.stdout.write(`\n${costliest}\n`);
  }
}

interface JsonReport {
  testResults: Array<{ name: string; startTime: number; endTime: number; assertionResults: unknown[] }>;
}

/** The files of every JSON report in `dir`, labelled by the report's name (vitest-node-24.21.0.json → node-24.21.0). */
export function readReports(dir: string): FileTime[] {
  const reports = readdirSync(dir).filter((f) => /^vitest-.*\.json$/.test(f));
  return reports.flatMap((name) => {
    const r = JSON.parse(readFileSync(path.join(dir, name), 'utf8')) as JsonReport;
    return r.testResults.map((t) => ({
      file: path.relative(process.cwd(), t.name),
      project: name.slice('vitest-'.length, -'.json'.length),
      seconds: (t.endTime - t.startTime) / 1000,
      tests: t.assertionResults.length,
    }));
  });
}
