import { expect, it } from 'vitest';
import { formatCostliest, formatSlowest, type FileTime } from './slowest.ts';

const file = (name: string, seconds: number, cpuSeconds?: number): FileTime => ({ file: name, project: 'sqlite', seconds, tests: 2, ...(cpuSeconds === undefined ? {} : { cpuSeconds }) });

it('lists the slowest files first, at most `count`, with the sum of every file', () => {
  const out = formatSlowest([file('a.test.ts', 1.25), file('b.test.ts', 30), file('c.test.ts', 4)], 2).split('\n');
  expect(out).toEqual(['slowest 2 of 3 test files (file seconds add up to 35 s):', '   30.0 s  sqlite    b.test.ts (2 tests)', '    4.0 s  sqlite    c.test.ts (2 tests)']);
});

it("gives each file's worker CPU, and their total, when the run recorded it", () => {
  const out = formatSlowest([file('a.test.ts', 10, 2.5), file('b.test.ts', 20, 12)]).split('\n');
  expect(out[0]).toBe("slowest 2 of 2 test files (file seconds add up to 30 s; the workers' own CPU 15 s, child processes not counted):");
  expect(out[1]).toBe('   20.0 s    12.0 s CPU  sqlite    b.test.ts (2 tests)');
});

it("adds each file's child processes' CPU, and their total, when the run recorded it", () => {
  const out = formatSlowest([{ ...file('a.test.ts', 10, 2.5), childCpuSeconds: 30 }, file('b.test.ts', 20, 12)]).split('\n');
  expect(out[0]).toBe("slowest 2 of 2 test files (file seconds add up to 30 s; the workers' own CPU 15 s, their child processes' 30 s):");
  expect(out[1]).toBe('   20.0 s    12.0 s CPU     0.0 s children  sqlite    b.test.ts (2 tests)');
  expect(out[2]).toBe('   10.0 s     2.5 s CPU    30.0 s children  sqlite    a.test.ts (2 tests)');
});

it('ranks the files by the CPU of their worker and children together, with the total of all', () => {
  const out = formatCostliest([{ ...file('a.test.ts', 10, 2.5), childCpuSeconds: 30 }, file('b.test.ts', 20, 12), file('c.test.ts', 5, 1)], 2).split('\n');
  expect(out).toEqual(['costliest 2 in CPU, worker and children (all files: 46 s):', '   32.5 s CPU    10.0 s  sqlite    a.test.ts (2 tests)', '   12.0 s CPU    20.0 s  sqlite    b.test.ts (2 tests)']);
});

it('prints no CPU ranking when the run recorded no CPU', () => {
  expect(formatCostliest([file('a.test.ts', 10)])).toBe('');
});
