import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { describeCpu, parseChildrenCpu, parseProcStat, sampleCpu, type CpuSample } from './machine-cpu.ts';

describe('parseProcStat', () => {
  it('counts user, nice, system, irq, softirq and steal as busy, idle and iowait apart (ticks of 1/100 s)', () => {
    const text = 'cpu  1000 200 300 5000 40 10 50 7 0 0\ncpu0 500 100 150 2500 20 5 25 3 0 0\nintr 1\n';
    expect(parseProcStat(text)).toEqual({ busy: 15.67, idle: 50, iowait: 0.4 });
  });

  it('refuses a text without the machine line', () => {
    expect(() => parseProcStat('intr 1\n')).toThrow('no "cpu " line');
  });
});

describe('parseChildrenCpu', () => {
  it('reads cutime and cstime past a command name holding spaces and parentheses', () => {
    const fields = ['S', '1', '2', '3', '0', '-1', '4194560', '10', '20', '30', '40', '111', '222', '1234', '766', '20', '0', '5'];
    expect(parseChildrenCpu(`4242 (node (x) y) ${fields.join(' ')}`)).toBe(20);
  });
});

describe('describeCpu', () => {
  const at = (t: number, busy: number, idle: number, own: number): CpuSample => ({ at: t, busy, idle, iowait: 0, own });

  it("splits the cores' seconds into this run's, the rest of the machine's and idle", () => {
    const line = describeCpu(at(10, 100, 50, 5), at(610, 1100, 250, 805), 2);
    expect(line).toBe(
      "cores: 600 s of wall time on 2 cores (1200 s of CPU): this run's processes 800 s (67 %), the rest of the machine 200 s (17 %: a system PostgreSQL the tests use, the kernel, other services), idle 200 s (17 %)",
    );
  });

  it('never reports a negative rest when the two clocks disagree by a tick', () => {
    expect(describeCpu(at(0, 0, 0, 0), at(1, 1, 1, 1.01), 2)).toContain('the rest of the machine 0 s');
  });
});

describe.skipIf(process.platform !== 'linux')('sampleCpu on Linux', () => {
  it("counts a child's CPU once the child has been waited for, and the machine's busy time with it", () => {
    const before = sampleCpu();
    // About 0.3 s of CPU in a child this process waits for.
    const run = spawnSync(process.execPath, ['-e', 'const end = process.cpuUsage().user + 300000; while (process.cpuUsage().user < end);']);
    expect(run.status).toBe(0);
    const after = sampleCpu();
    expect(before).not.toBeNull();
    expect(after).not.toBeNull();
    expect(after!.own - before!.own).toBeGreaterThanOrEqual(0.29);
    expect(after!.busy - before!.busy).toBeGreaterThanOrEqual(0.29);
    expect(after!.at).toBeGreaterThan(before!.at);
  });
});
