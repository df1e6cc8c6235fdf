import { defineConfig } from 'vitest/config';

const shared = {
  exclude: ['node_modules/**', 'data/**'],
  testTimeout: 30_000,
  hookTimeout: 90_000,
  pool: 'forks' as const,
  setupFiles: ['server/testing/postgres-setup.ts', 'server/testing/secret-sink-setup.ts', 'server/testing/data-dirs-setup.ts'],
};

// Two projects: everything on the embedded SQLite store, and the API and delivery suites again
// on PostgreSQL (the harness opens a fresh database per server when TEST_STORE=postgres).
// One PostgreSQL server for the whole run, chosen once by the root's globalSetup, and one
// secrets sink every test server writes to, checked for secrets when the run ends.
export default defineConfig({
  test: {
    globalSetup: ['server/testing/postgres-global-setup.ts', 'server/testing/secret-sink-global-setup.ts'],
    projects: [
      { test: { ...shared, name: 'sqlite', include: ['**/*.test.ts'] } },
      {
        test: {
          ...shared,
          name: 'postgres',
          include: ['server/api/**/*.test.ts', 'server/delivery/{worker,engine}.test.ts'],
          exclude: [...shared.exclude, 'server/api/prism-proxy.test.ts'],
          env: { TEST_STORE: 'postgres' },
        },
      },
    ],
  },
});
