// The command line of `npm run spec:diff` (scripts/spec-diff.ts) as a function: the options, the
// report it prints and the exit code it returns, so that its test runs it in its own process
// once and in the test's process for every other case (a process start is most of a case's CPU).
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { stringify as toYaml } from 'yaml';
import { type Change, compareSpecDirs, resolveBase, specAtRef } from './spec-diff.ts';
import { ROOT } from './specs.ts';

/** Where the command writes: a line to standard output, a line to standard error. */
export interface SpecDiffIo {
  out(line: string): void;
  err(line: string): void;
}

/** Runs `spec:diff` with `argv` (the arguments after the program); resolves to its exit code. */
export async function specDiffCli(argv: readonly string[], io: SpecDiffIo): Promise<number> {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      base: { type: 'string' },
      all: { type: 'boolean', default: false },
      // Another checkout whose spec/ is checked (the tests use scratch repositories).
      repo: { type: 'string', default: ROOT },
      help: { type: 'boolean', default: false },
    },
    allowPositionals: false,
  });
  const repo = path.resolve(values.repo);

  if (values.help) {
    io.out('usage: npm run spec:diff [-- --base <git ref>] [--all] [--repo <checkout>]\n  Lists breaking changes of spec/ against the base and fails on any not accepted in spec/breaking-changes.yaml.');
    return 0;
  }

  const base = await resolveBase(repo, values.base);
  if (base === undefined) {
    io.out('spec:diff: no earlier version of spec/ to compare with (no main, tag or parent commit); nothing to check.');
    return 0;
  }

  let baseDir: string | undefined;
  try {
    baseDir = await specAtRef(base.ref, repo);
    const report = await compareSpecDirs(baseDir, path.join(repo, 'spec'));
    io.out(`spec:diff: spec/ against ${base.ref} (${base.why})`);
    printChanges(report.changes.filter((c) => values.all || c.breaking), new Map(report.acknowledged.map((a) => [a.change, a.by])), io);

    const breaking = report.changes.filter((c) => c.breaking).length;
    io.out(
      `\n${report.changes.length} change(s): ${breaking} breaking (${report.acknowledged.length} accepted, ${report.unacknowledged.length} not), ${report.changes.length - breaking} non-breaking or annotations${values.all ? '' : ' (--all lists them)'}.`,
    );
    for (const a of report.unusedAcknowledgements) {
      io.out(`note: spec/breaking-changes.yaml accepts a change that no longer appears against ${base.ref}: ${a.api} ${a.where ?? '*'} ${a.pointer ?? ''}`);
    }
    if (report.unacknowledged.length === 0) return 0;
    const entries = report.unacknowledged.map((c) => ({ api: c.api, where: c.where, pointer: c.pointer, reason: 'TODO: why this break is acceptable, and how clients are told' }));
    io.err(`\nspec:diff failed: ${report.unacknowledged.length} breaking change(s) not accepted. Revert them, or accept each in spec/breaking-changes.yaml:\n`);
    io.err(toYaml({ accepted: entries.slice(0, 20) }));
    if (entries.length > 20) io.err(`(and ${entries.length - 20} more; a "pointer" glob with * or ** can accept several at once)`);
    return 1;
  } catch (err) {
    io.err(err instanceof Error ? err.message : String(err));
    return 2;
  } finally {
    if (baseDir !== undefined) await rm(path.dirname(baseDir), { recursive: true, force: true });
  }
}

/** The changes shown, per API and place: ✖ breaking, ✔ breaking and accepted (with the reason), · the rest. */
function printChanges(shown: readonly Change[], acked: ReadonlyMap<Change, { reason: string }>, io: SpecDiffIo): void {
  const byApi = new Map<string, Map<string, Change[]>>();
  for (const c of shown) {
    const apis = byApi.get(c.api) ?? new Map<string, Change[]>();
    apis.set(c.where, [...(apis.get(c.where) ?? []), c]);
    byApi.set(c.api, apis);
  }
  for (const [api, places] of byApi) {
    io.out(`\n${api}`);
    for (const [where, changes] of places) {
      io.out(`  ${where}`);
      for (const c of changes) {
        const ack = acked.get(c);
        const mark = !c.breaking ? '·' : ack === undefined ? '✖' : '✔';
        io.out(`    ${mark} ${c.description}${c.pointer === '' ? '' : ` (${c.pointer})`}${ack === undefined ? '' : `\n        accepted: ${ack.reason.trim()}`}`);
      }
    }
  }
}
