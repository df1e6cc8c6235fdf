// Where the machine's CPU went during a measured window, read from Linux's /proc (elsewhere:
// nothing): how many of the cores were busy, and how much of that was the servers, PostgreSQL's
// processes and the bench itself (load generator and receiver). It says whether a figure is
// bound by the machine or by a wait somewhere.
import { readFileSync, readdirSync } from 'node:fs';
import os from 'node:os';

export interface CpuSnapshot {
  /** Jiffies of all cores: busy (everything but idle and iowait) and in all. */
  busy: number;
  total: number;
  /** utime + stime of each process watched, and of every `postgres` process. */
  procs: Map<number, number>;
  postgres: Map<number, number>;
  bench: number;
}

/** Cores busy over the window, and the share (in cores) of each party. */
export interface CpuShare {
  cores: number;
  busy: number;
  servers: number;
  postgres: number;
  bench: number;
}

const HZ = 100; // USER_HZ: the unit of /proc's times on every Linux Node runs on

/** A process's name and CPU time (utime + stime, in jiffies) from /proc; null when gone or not Linux. */
export function procTime(pid: number): { comm: string; time: number } | null {
  try {
    const line = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const close = line.lastIndexOf(')');
    const fields = line.slice(close + 2).split(' ');
    return { comm: line.slice(line.indexOf('(') + 1, close), time: Number(fields[11]) + Number(fields[12]) };
  } catch {
    return null; // gone, or not Linux
  }
}

export function cpuSnapshot(pids: readonly number[]): CpuSnapshot | null {
  let stat: string;
  try {
    stat = readFileSync('/proc/stat', 'utf8');
  } catch {
    return null;
  }
  const t = stat.slice(0, stat.indexOf('\n')).trim().split(/\s+/).slice(1).map(Number);
  const total = t.slice(0, 8).reduce((a, b) => a + b, 0);
  const idle = (t[3] ?? 0) + (t[4] ?? 0);
  const procs = new Map<number, number>();
  for (const pid of pids) procs.set(pid, procTime(pid)?.time ?? 0);
  const postgres = new Map<number, number>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const p = procTime(Number(name));
    if (p?.comm === 'postgres') postgres.set(Number(name), p.time);
  }
  const u = process.cpuUsage();
  return { busy: total - idle, total, procs, postgres, bench: ((u.user + u.system) / 1e6) * HZ };
}

export function cpuShare(a: CpuSnapshot | null | undefined, b: CpuSnapshot | null | undefined, cores = os.cpus().length): CpuShare | null {
  if (!a || !b || b.total <= a.total) return null;
  const seconds = (b.total - a.total) / HZ / cores;
  const delta = (to: Map<number, number>, from: Map<number, number>): number => [...to].reduce((s, [pid, v]) => s + v - (from.get(pid) ?? 0), 0);
  const inCores = (jiffies: number): number => Number((jiffies / HZ / seconds).toFixed(2));
  return {
    cores,
    busy: inCores(b.busy - a.busy),
    servers: inCores(delta(b.procs, a.procs)),
    postgres: inCores(delta(b.postgres, a.postgres)),
    bench: inCores(b.bench - a.bench),
  };
}

export function describeShare(s: CpuShare | null): string {
  return s === null ? '' : `CPU ${s.busy} of ${s.cores} cores busy (servers ${s.servers}, PostgreSQL ${s.postgres}, bench ${s.bench}); `;
}
