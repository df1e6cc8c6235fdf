// Every test file: the CPU its worker process spent on it, kept in the file's meta for the
// slowest-files reporter (scripts/test-time/slowest.ts): the in-process part of a file (its test
// servers, receivers, conformance runs and the tests themselves) and, on Linux, that of the
// child processes it started and that have exited (servers, CLIs, PostgreSQL: the kernel adds
// a child's CPU to its parent's once the parent has reaped it). Workers run one file at a
// time, so the difference of two readings is the file's. This hook runs after the file's own
// afterAll hooks (after hooks run in reverse order), once its children are stopped.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll } from 'vitest';

declare module '@vitest/runner' {
  interface TaskMeta {
    /** CPU seconds of the worker process while the file ran (user + system). */
    cpuSeconds?: number;
    /** CPU seconds of the child processes that exited while the file ran (Linux only). */
    childCpuSeconds?: number;
  }
}

/** Clock ticks a second of /proc's times (USER_HZ: 100 on every Linux architecture Node runs on). */
const USER_HZ = 100;

/** CPU seconds of every reaped child of this process (cutime + cstime of /proc/self/stat), or null off Linux. */
function childrenCpuSeconds(): number | null {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    // Fields after the command's closing parenthesis start at field 3 (state); cutime is field 16.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[13]) + Number(fields[14])) / USER_HZ;
  } catch {
    return null;
  }
}

let started: NodeJS.CpuUsage | null = null;
let childrenStarted: number | null = null;

beforeAll(() => {
  started = process.cpuUsage();
  childrenStarted = childrenCpuSeconds();
});

// Vitest 4 passes the hook's context first (a fixture object: it must be destructured) and
// the suite, here the file, second.
afterAll(({}, suite) => {
  if (!started) return;
  const spent = process.cpuUsage(started);
  suite.meta.cpuSeconds = (spent.user + spent.system) / 1e6;
  const children = childrenCpuSeconds();
  if (children !== null && childrenStarted !== null) suite.meta.childCpuSeconds = children - childrenStarted;
});
