import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

// How the suite spends its time (docs/operations.md, "Tests and CI"): most files wait (child
// servers, PostgreSQL round trips, receivers, retries), so they run side by side, more of them
// than there are cores. TEST_WORKERS overrides the count (1 runs the files one at a time).
const WORKERS = Number(process.env.TEST_WORKERS) || Math.max(4, availableParallelism() * 2);

/**
 * Files that run alone, after everything else, each for a reason of timing:
 * - postgres-faults: its rows measure the seconds to the first 503 and back after each fault
 *   (goals of 2-3 s), and kill, pause and restart PostgreSQL servers of its own.
 * - postgres-outage, sigterm, clients: they load one server with hundreds of requests or
 *   connections and measure what it answered within its deadlines; other files' CPU would
 *   make the server miss deadlines it meets on its own.
 */
export const ALONE = ['server/faults/postgres-faults.test.ts', 'server/faults/postgres-outage.test.ts', 'server/faults/sigterm.test.ts', 'server/faults/clients.test.ts'];

const shared = {
  exclude: ['node_modules/**', 'data/**'],
  testTimeout: 30_000,
  hookTimeout: 90_000,
  pool: 'forks' as const,
  setupFiles: ['server/testing/postgres-setup.ts', 'server/testing/server-bundle-setup.ts', 'server/testing/secret-sink-setup.ts', 'server/testing/data-dirs-setup.ts'],
};

// Three projects: everything on the embedded SQLite store; the API and delivery suites again on
// PostgreSQL (the harness opens a fresh database per server when TEST_STORE=postgres); and the
// files that run alone, one at a time, once the others are done (maxWorkers 1 puts them in
// vitest's sequential group). One PostgreSQL server for the whole run, chosen once by the
// root's globalSetup, the child programs bundled once, and one secrets sink every test server
// writes to, checked for secrets when the run ends.
export default defineConfig({
  test: {
    globalSetup: ['server/testing/postgres-global-setup.ts', 'server/testing/server-bundle-global-setup.ts', 'server/testing/secret-sink-global-setup.ts'],
    maxWorkers: WORKERS,
    // The JSON report is what `npm run test:slow` reads; the last reporter prints the slowest files.
    reporters: ['default', 'json', './scripts/test-time/slowest.ts'],
    outputFile: { json: 'test-results/vitest-local.json' },
    projects: [
      { test: { ...shared, name: 'sqlite', include: ['**/*.test.ts'], exclude: [...shared.exclude, ...ALONE], maxWorkers: WORKERS } },
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
      { test: { ...shared, name: 'alone', include: ALONE, maxWorkers: 1 } },
    ],
  },
});
