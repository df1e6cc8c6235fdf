import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';
import LongestFirst from './scripts/test-time/sequencer.ts';

// How the suite spends its time (docs/operations.md, "Tests and CI"): most files wait (child
// servers, PostgreSQL round trips, receivers, retries), so they run side by side, more of them
// than there are cores. TEST_WORKERS overrides the count (1 runs the files one at a time).
// Eight on two cores: with six, the sender-target runs' quiet periods left the cores 13 % idle
// (vitest 366 s); with eight they are 4 % idle (349 s), 2026-12-07, docs/operations.md.
const WORKERS = Number(process.env.TEST_WORKERS) || Math.max(8, availableParallelism() * 2);

const shared = {
  exclude: ['node_modules/**', 'data/**'],
  testTimeout: 30_000,
  hookTimeout: 90_000,
  pool: 'forks' as const,
  // A worker keeps its modules from one file to the next: re-importing the server's module graph
  // for every file was a third of the run's CPU (import 84 s → 21 s over server/, client/).
  // Tests therefore keep no state in modules between files; each builds what it uses.
  isolate: false,
  setupFiles: ['server/testing/postgres-setup.ts', 'server/testing/server-bundle-setup.ts', 'server/testing/secret-sink-setup.ts', 'server/testing/data-dirs-setup.ts', 'server/testing/cpu-time-setup.ts'],
};

// Two projects: everything on the embedded SQLite store, and the API and delivery suites again
// on PostgreSQL (the harness opens a fresh database per server when TEST_STORE=postgres), their
// files side by side, the longest first (scripts/test-time/sequencer.ts). One PostgreSQL server
// for the whole run, chosen once by the root's globalSetup, the child programs bundled once,
// and one secrets sink every test server writes to, checked for secrets when the run ends.
export default defineConfig({
  test: {
    globalSetup: ['server/testing/postgres-global-setup.ts', 'server/testing/server-bundle-global-setup.ts', 'server/testing/secret-sink-global-setup.ts'],
    maxWorkers: WORKERS,
    sequence: { sequencer: LongestFirst },
    // The JSON report is what `npm run test:slow` reads; the last reporter prints the slowest files.
    reporters: ['default', 'json', './scripts/test-time/slowest.ts'],
    outputFile: { json: 'test-results/vitest-local.json' },
    projects: [
      { test: { ...shared, name: 'sqlite', include: ['**/*.test.ts'], maxWorkers: WORKERS } },
      {
        test: {
          ...shared,
          name: 'postgres',
          include: ['server/api/**/*.test.ts', 'server/delivery/{worker,engine}.test.ts'],
          exclude: [...shared.exclude, 'server/api/prism-proxy.test.ts'],
          env: { TEST_STORE: 'postgres' },
          maxWorkers: WORKERS,
        },
      },
    ],
  },
});
