// `payments-conformance <target> [options]`: option parsing shared by every target, the run,
// the reports. Exit codes: 0 nothing failed, 1 some check failed, 2 a usage error (or a
// target that is not implemented yet).
import { randomInt } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { ParseArgsConfig } from 'node:util';
import { runPassed } from './check.ts';
import type { RunReport } from './check.ts';
import { toJUnitXml } from './junit.ts';
import { toJsonText } from './json.ts';
import { TOOL_NAME, runChecks } from './runner.ts';
import type { Output } from './runner.ts';
import { UsageError } from './target.ts';
import { coverageMap, coverageMapLines, preparedTargets, unaccounted } from './coverage-map.ts';
import type { OptionSpec, OptionValues, Target, TargetRegistry } from './target.ts';

export const EXIT_OK = 0;
export const EXIT_FAILED = 1;
export const EXIT_USAGE = 2;

export const COMMON_OPTIONS: Record<string, OptionSpec> = {
  seed: {
    type: 'string',
    value: 'N',
    description: 'seed of every generated value (printed in every report; give it again to repeat a run)',
    defaultText: 'random',
  },
  report: {
    type: 'string',
    multiple: true,
    value: 'KIND=FILE',
    description: 'also write a report: junit=FILE (JUnit XML) or json=FILE; repeatable',
  },
  quiet: { type: 'boolean', description: 'no progress line and no line per passed check: failures and the summary only' },
  help: { type: 'boolean', description: 'this help' },
};

export interface CliIo {
  stdout: Output;
  stderr: Output;
  signal?: AbortSignal;
}

export interface ReportRequest {
  kind: 'junit' | 'json';
  file: string;
}

export async function runCli(argv: readonly string[], registry: TargetRegistry, io: CliIo): Promise<number> {
  const [first, ...rest] = argv;
  if (first === undefined) {
    io.stderr.write(`${generalHelp(registry)}\n`);
    return EXIT_USAGE;
  }
  if (first === '--help' || first === '-h' || first === 'help') {
    io.stdout.write(`${generalHelp(registry)}\n`);
    return EXIT_OK;
  }
  if (first === 'coverage') return printCoverageMap(rest, registry, io);
  const target = registry.get(first);
  if (!target) {
    io.stderr.write(`${TOOL_NAME}: unknown target "${first}"; targets: ${registry.list().map((t) => t.name).join(', ')}\n`);
    return EXIT_USAGE;
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    io.stdout.write(`${targetHelp(target)}\n`);
    return EXIT_OK;
  }
  if (!target.implemented) {
    io.stderr.write(`${TOOL_NAME} ${target.name}: not implemented yet\n`);
    return EXIT_USAGE;
  }

  let values: OptionValues;
  let seed: number;
  let reports: ReportRequest[];
  try {
    values = parseOptions(target, rest);
    seed = parseSeed(values.seed);
    reports = parseReports(values.report);
  } catch (err) {
    return usageFailure(io, target, err);
  }
  const quiet = values.quiet === true;

  let prepared;
  try {
    prepared = await target.prepare(values, { seed, quiet });
  } catch (err) {
    if (err instanceof UsageError) return usageFailure(io, target, err);
    throw err;
  }

  let report: RunReport;
  try {
    const started = (await prepared.start?.()) ?? [];
    report = await runChecks(prepared.checks, {
      target: target.name,
      seed,
      out: io.stdout,
      quiet,
      notes: [...(prepared.notes ?? []), ...started],
      ...(prepared.catalogue ? { catalogue: prepared.catalogue } : {}),
      ...(io.signal ? { signal: io.signal } : {}),
    });
  } finally {
    await prepared.close?.();
  }

  for (const r of reports) {
    const file = resolve(r.file);
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, r.kind === 'junit' ? toJUnitXml(report) : toJsonText(report), 'utf8');
    if (!quiet) io.stdout.write(`${r.kind} report written to ${file}\n`);
  }
  if (io.signal?.aborted) return EXIT_FAILED;
  return runPassed(report) ? EXIT_OK : EXIT_FAILED;
}

/**
 * `coverage [--json]`: the static coverage map (every rule with the checks that claim it, or
 * the written reason it has none), without a run. Exit 1 when a rule has neither.
 */
async function printCoverageMap(args: readonly string[], registry: TargetRegistry, io: CliIo): Promise<number> {
  if (args.includes('--help') || args.includes('-h')) {
    io.stdout.write(`Usage: ${TOOL_NAME} coverage [--json]\n\n${COVERAGE_SUMMARY}\n`);
    return EXIT_OK;
  }
  const unknown = args.filter((a) => a !== '--json');
  if (unknown.length > 0) {
    io.stderr.write(`${TOOL_NAME} coverage: unknown option ${unknown[0]}; it takes only --json\n`);
    return EXIT_USAGE;
  }
  const map = coverageMap(await preparedTargets(registry));
  io.stdout.write(args.includes('--json') ? `${JSON.stringify(map, null, 2)}\n` : `${coverageMapLines(map).join('\n')}\n`);
  const missing = unaccounted(map);
  if (missing.length > 0) io.stderr.write(`${TOOL_NAME} coverage: ${missing.length} rule(s) with no check and no written reason: ${missing.join(', ')}\n`);
  return missing.length > 0 ? EXIT_FAILED : EXIT_OK;
}

const COVERAGE_SUMMARY = 'Lists every rule of the contract (and of the seed documents the targets quote), per operation, with the checks that judge it, or the written reason it has none; no implementation is contacted.';

function usageFailure(io: CliIo, target: Target, err: unknown): number {
  const message = err instanceof Error ? err.message : String(err);
  io.stderr.write(`${TOOL_NAME} ${target.name}: ${message}\nRun "${TOOL_NAME} ${target.name} --help" for the options.\n`);
  return EXIT_USAGE;
}

function parseOptions(target: Target, args: string[]): OptionValues {
  const all = { ...target.options, ...COMMON_OPTIONS };
  const options: NonNullable<ParseArgsConfig['options']> = {};
  for (const [name, spec] of Object.entries(all)) {
    options[name] = { type: spec.type, ...(spec.multiple ? { multiple: true } : {}) };
  }
  try {
    const { values } = parseArgs({ args, options, strict: true, allowPositionals: false });
    return values as OptionValues;
  } catch (err) {
    // node:util's messages name the option; drop its long hints.
    throw new UsageError(err instanceof Error ? err.message.split('. To specify')[0] ?? err.message : String(err));
  }
}

export function parseSeed(value: OptionValues[string]): number {
  if (value === undefined) return randomInt(0, 2 ** 31);
  if (typeof value !== 'string' || !/^[0-9]{1,10}$/.test(value) || Number(value) > 0xffffffff) {
    throw new UsageError('--seed must be a whole number from 0 to 4294967295');
  }
  return Number(value);
}

export function parseReports(value: OptionValues[string]): ReportRequest[] {
  if (value === undefined) return [];
  const list = Array.isArray(value) ? value : [value];
  return list.map((item) => {
    const text = String(item);
    const eq = text.indexOf('=');
    const kind = eq > 0 ? text.slice(0, eq) : '';
    const file = eq > 0 ? text.slice(eq + 1) : '';
    if ((kind !== 'junit' && kind !== 'json') || file === '') {
      throw new UsageError(`--report takes junit=FILE or json=FILE, not "${text}"`);
    }
    return { kind, file };
  });
}

export function generalHelp(registry: TargetRegistry): string {
  const targets = registry.list();
  const width = Math.max(...targets.map((t) => t.name.length));
  return [
    `Usage: ${TOOL_NAME} <target> [options]`,
    '',
    'Checks an implementation of the payments contract against the specs in spec/.',
    '',
    'Targets:',
    ...targets.map((t) => `  ${t.name.padEnd(width)}  ${t.summary}${t.implemented ? '' : ' (not implemented yet)'}`),
    '',
    'Options of every target:',
    ...optionLines(COMMON_OPTIONS),
    '',
    `Exit status: 0 when no check failed, 1 when one did, 2 for a usage error.`,
    `"${TOOL_NAME} <target> --help" lists the target's own options.`,
    `"${TOOL_NAME} coverage" prints the static coverage map: ${COVERAGE_SUMMARY}`,
  ].join('\n');
}

export function targetHelp(target: Target): string {
  return [
    `Usage: ${TOOL_NAME} ${target.synopsis}`,
    '',
    target.summary + (target.implemented ? '' : ' (not implemented yet)'),
    ...(target.description ? ['', target.description.trim()] : []),
    ...(Object.keys(target.options).length > 0 ? ['', 'Options:', ...optionLines(target.options)] : []),
    '',
    'Options of every target:',
    ...optionLines(COMMON_OPTIONS),
  ].join('\n');
}

function optionLines(options: Record<string, OptionSpec>): string[] {
  const entries = Object.entries(options).map(([name, spec]) => [`--${name}${spec.value ? ` ${spec.value}` : ''}`, spec] as const);
  const width = Math.max(...entries.map(([flag]) => flag.length));
  return entries.map(([flag, spec]) => {
    const def = spec.defaultText ? ` (default: ${spec.defaultText})` : '';
    return `  ${flag.padEnd(width)}  ${spec.description}${def}`;
  });
}
