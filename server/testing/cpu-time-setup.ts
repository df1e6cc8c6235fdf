// Every test file: the CPU its worker process spent on it, kept in the file's meta for the
// slowest-files reporter (scripts/test-time/slowest.ts). That is the in-process part of a file
// (its test servers, receivers, conformance runs and the tests themselves), not its child
// processes'. Workers run one file at a time, so the difference of two readings is the file's.
import { afterAll, beforeAll } from 'vitest';

declare module '@vitest/runner' {
  interface TaskMeta {
    /** CPU seconds of the worker process while the file ran (user + system). */
    cpuSeconds?: number;
  }
}

let started: NodeJS.CpuUsage | null = null;

beforeAll(() => {
  started = process.cpuUsage();
});

// Vitest 4 passes the hook's context first (a fixture object: it must be destructured) and
// the suite, here the file, second.
afterAll(({}, suite) => {
  if (!started) return;
  const spent = process.cpuUsage(started);
  suite.meta.cpuSeconds = (spent.user + spent.system) / 1e6;
});
