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
  const at = (t: number, busy: number, idle: number, own: number): CpuSample => ({ at: t, busy, idle, iowait: 0, own, children: 0 });

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
  it("counts a waited-for child's CPU, as much as the child itself reports, in the children's part of the run's own", () => {
    const before = sampleCpu();
    // About 0.3 s of CPU in a child this process waits for; the child prints what it used in all.
    const busy = 'const used = () => { const u = process.cpuUsage(); return u.user + u.system; }; const end = used() + 300000; while (used() < end); console.log(used());';
    const run = spawnSync(process.execPath, ['-e', busy], { encoding: 'utf8' });
    expect(run.status).toBe(0);
    const after = sampleCpu();
    expect(before).not.toBeNull();
    expect(after).not.toBeNull();
    const reported = Number(run.stdout.trim()) / 1e6;
    expect(reported).toBeGreaterThanOrEqual(0.3);
    // The kernel rounds each of the child's user and system times down to a tick (1/100 s). Only
    // this child can have been waited for in between: nothing else counts it, whatever else runs.
    const counted = after!.children - before!.children;
    expect(counted).toBeGreaterThanOrEqual(reported - 0.02);
    expect(after!.own - before!.own).toBeGreaterThanOrEqual(counted);
    expect(after!.at).toBeGreaterThan(before!.at);
  });
});
