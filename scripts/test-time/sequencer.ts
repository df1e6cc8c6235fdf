// The order test files start in: the longest first, across projects, so that the run does not
// end on one long file started late while the other workers sit idle. Vitest's own order runs
// one project after another and, without a cache of earlier durations (a fresh clone, CI),
// takes the largest files first, which are not the longest. So the files known to be long
// (`npm run test:slow` lists them) lead, in this order; then the rest by the durations vitest
// cached from an earlier run on this machine, else by size.
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** The longest files of a run, longest first (docs/operations.md, "Tests and CI"). */
export const LONGEST_FIRST = [
  'server/faults/postgres-faults.test.ts',
  'server/store/postgres/postgres.test.ts',
  'server/store/postgres/postgres-queue.test.ts',
  'server/delivery/multi-instance.test.ts',
  'conformance-tests/sender.test.ts',
  'conformance-tests/mutants/mutants-sender-1.test.ts',
  'conformance-tests/mutants/mutants-sender-2.test.ts',
  'conformance-tests/mutants/mutants-sender-3.test.ts',
  'conformance-tests/mutants/mutants-sender-4.test.ts',
  'server/delivery/worker.test.ts',
  'scripts/mock/probe.test.ts',
  'server/api/events-listen.e2e.test.ts',
  'conformance-tests/receiver.test.ts',
  'conformance-tests/sender-standard.test.ts',
  'scripts/mock/stateful-sender.test.ts',
  'conformance-tests/mutants/mutants-control.test.ts',
  'conformance-tests/mutants/mutants-api-1.test.ts',
  'conformance-tests/mutants/mutants-api-2.test.ts',
  'server/lifecycle/entry-points.test.ts',
  'scripts/spec-diff.test.ts',
  'scripts/dev/dev.test.ts',
  'server/faults/postgres-outage.test.ts',
  'server/faults/sigterm.test.ts',
];

export default class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    const cache = this.ctx.cache;
    const key = (f: TestSpecification): string => `${f.project.name}:${relative(root, f.moduleId)}`;
    const rank = (f: TestSpecification): number => {
      const i = LONGEST_FIRST.indexOf(relative(root, f.moduleId));
      return i === -1 ? LONGEST_FIRST.length : i;
    };
    const known = (f: TestSpecification): number => cache.getFileTestResults(key(f))?.duration ?? -1;
    const size = (f: TestSpecification): number => cache.getFileStats(key(f))?.size ?? 0;
    return [...files].sort(
      (a, b) =>
        a.project.config.sequence.groupOrder - b.project.config.sequence.groupOrder ||
        rank(a) - rank(b) ||
        known(b) - known(a) ||
        size(b) - size(a),
    );
  }
}
