import { describe, expect, it } from 'vitest';
import { cpuShare, cpuSnapshot, describeShare, type CpuSnapshot } from './cpu.ts';

const snap = (o: Partial<CpuSnapshot>): CpuSnapshot => ({ busy: 0, total: 0, procs: new Map(), postgres: new Map(), bench: 0, ...o });

describe('bench CPU shares', () => {
  it('turns two snapshots into cores busy and each party\'s share, counting processes born in between from zero', () => {
    // 2 cores for 1 s = 200 jiffies in all, 150 of them busy.
    const a = snap({ busy: 1000, total: 5000, procs: new Map([[10, 40]]), postgres: new Map([[20, 5]]), bench: 7 });
    const b = snap({ busy: 1150, total: 5200, procs: new Map([[10, 100]]), postgres: new Map([[20, 35], [21, 20]]), bench: 27 });
    const s = cpuShare(a, b, 2);
    expect(s).toEqual({ cores: 2, busy: 1.5, servers: 0.6, postgres: 0.5, bench: 0.2 });
    expect(describeShare(s)).toBe('CPU 1.5 of 2 cores busy (servers 0.6, PostgreSQL 0.5, bench 0.2); ');
  });

  it('says nothing without two snapshots or when no time passed', () => {
    expect(cpuShare(null, snap({ total: 1 }))).toBeNull();
    expect(cpuShare(snap({ total: 5 }), snap({ total: 5 }))).toBeNull();
    expect(describeShare(null)).toBe('');
  });

  it.runIf(process.platform === 'linux')('reads this machine: this process among the watched ones', () => {
    const s = cpuSnapshot([process.pid]);
    expect(s).not.toBeNull();
    expect(s!.total).toBeGreaterThan(s!.busy);
    expect(s!.procs.get(process.pid)).toBeGreaterThanOrEqual(0);
  });
});
