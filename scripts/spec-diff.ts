// npm run spec:diff [-- --base <git ref>] [--all]: lists the breaking changes of spec/ (the
// working tree) against an earlier version, per operation and message, and fails on any that
// spec/breaking-changes.yaml does not accept. See scripts/lib/spec-diff.ts for how.
//
// The base: --base when given; otherwise `main`; when the checkout is on `main` itself (CI on
// the submitted main), the newest `spec-v*` tag reachable from HEAD, else HEAD's first parent (the
// main before the last merge).
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { stringify as toYaml } from 'yaml';
import { type Change, compareSpecDirs, resolveBase, specAtRef } from './lib/spec-diff.ts';
import { ROOT } from './lib/specs.ts';

const { values } = parseArgs({
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
  console.log('usage: npm run spec:diff [-- --base <git ref>] [--all] [--repo <checkout>]\n  Lists breaking changes of spec/ against the base and fails on any not accepted in spec/breaking-changes.yaml.');
  process.exit(0);
}

const base = await resolveBase(repo, values.base);
if (base === undefined) {
  console.log('spec:diff: no earlier version of spec/ to compare with (no main, tag or parent commit); nothing to check.');
  process.exit(0);
}

let baseDir: string | undefined;
try {
  baseDir = await specAtRef(base.ref, repo);
  const report = await compareSpecDirs(baseDir, path.join(repo, 'spec'));
  const acked = new Map(report.acknowledged.map((a) => [a.change, a.by]));
  const shown = report.changes.filter((c) => values.all || c.breaking);
  console.log(`spec:diff: spec/ against ${base.ref} (${base.why})`);

  const byApi = new Map<string, Map<string, Change[]>>();
  for (const c of shown) {
    const apis = byApi.get(c.api) ?? new Map<string, Change[]>();
    apis.set(c.where, [...(apis.get(c.where) ?? []), c]);
    byApi.set(c.api, apis);
  }
  for (const [api, places] of byApi) {
    console.log(`\n${api}`);
    for (const [where, changes] of places) {
      console.log(`  ${where}`);
      for (const c of changes) {
        const ack = acked.get(c);
        const mark = !c.breaking ? '·' : ack === undefined ? '✖' : '✔';
        console.log(`    ${mark} ${c.description}${c.pointer === '' ? '' : ` (${c.pointer})`}${ack === undefined ? '' : `\n        accepted: ${ack.reason.trim()}`}`);
      }
    }
  }

  const breaking = report.changes.filter((c) => c.breaking).length;
  console.log(
    `\n${report.changes.length} change(s): ${breaking} breaking (${report.acknowledged.length} accepted, ${report.unacknowledged.length} not), ${report.changes.length - breaking} non-breaking or annotations${values.all ? '' : ' (--all lists them)'}.`,
  );
  for (const a of report.unusedAcknowledgements) {
    console.log(`note: spec/breaking-changes.yaml accepts a change that no longer appears against ${base.ref}: ${a.api} ${a.where ?? '*'} ${a.pointer ?? ''}`);
  }
  if (report.unacknowledged.length > 0) {
    const entries = report.unacknowledged.map((c) => ({ api: c.api, where: c.where, pointer: c.pointer, reason: 'TODO: why this break is acceptable, and how clients are told' }));
    console.error(`\nspec:diff failed: ${report.unacknowledged.length} breaking change(s) not accepted. Revert them, or accept each in spec/breaking-changes.yaml:\n`);
    console.error(toYaml({ accepted: entries.slice(0, 20) }));
    if (entries.length > 20) console.error(`(and ${entries.length - 20} more; a "pointer" glob with * or ** can accept several at once)`);
    process.exitCode = 1;
  }
} catch (err) {
  console.error(err instanceof Error ? err.message : String(err));
  process.exitCode = 2;
} finally {
  if (baseDir !== undefined) await rm(path.dirname(baseDir), { recursive: true, force: true });
}
