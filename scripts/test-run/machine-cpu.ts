// Where the machine's CPU went while `npm test` ran: this run's processes (vitest, its workers,
// the servers and PostgreSQL it started, the checks) against everything else on the machine
// (a system PostgreSQL the tests use, the kernel, services the project does not use) and idle.
// The suite is bound by the cores on a 2-core machine, so a run that took longer than the last
// is read here first: did the run cost more, or did the rest of the machine take the cores?
// Linux only (/proc); elsewhere nothing is read and nothing is printed.
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';

/** Linux's USER_HZ: the unit of /proc's CPU times, 100 on every architecture Node runs on. */
const TICKS_PER_SECOND = 100;

export interface CpuSample {
  /** Seconds since an arbitrary start (performance.now() / 1000). */
  at: number;
  /** The machine's CPU seconds, all cores, from /proc/stat's first line. */
  busy: number;
  idle: number;
  iowait: number;
  /** This process's CPU seconds and those of its descendants it (or they) waited for. */
  own: number;
  /** The waited-for descendants' part of `own` (/proc/self/stat's cutime + cstime). */
  children: number;
}

/** The machine's busy, idle and I/O-wait seconds from the text of /proc/stat. */
export function parseProcStat(text: string): Pick<CpuSample, 'busy' | 'idle' | 'iowait'> {
  const line = text.split('\n').find((l) => l.startsWith('cpu '));
  if (line === undefined) throw new Error('/proc/stat has no "cpu " line');
  // user nice system idle iowait irq softirq steal guest guest_nice; guest time is already in user.
  const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] = line.trim().split(/\s+/).slice(1).map(Number);
  return { busy: (user + nice + system + irq + softirq + steal) / TICKS_PER_SECOND, idle: idle / TICKS_PER_SECOND, iowait: iowait / TICKS_PER_SECOND };
}

/** The CPU seconds of the waited-for descendants, from the text of /proc/self/stat (cutime, cstime). */
export function parseChildrenCpu(text: string): number {
  // The command name (field 2) may hold spaces and parentheses: the fields after it start past the last ')'.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[13]) + Number(fields[14])) / TICKS_PER_SECOND;
}

/** Now's sample, or null where /proc cannot be read (not Linux). */
export function sampleCpu(): CpuSample | null {
  try {
    const usage = process.resourceUsage();
    const self = (usage.userCPUTime + usage.systemCPUTime) / 1e6;
    const children = parseChildrenCpu(readFileSync('/proc/self/stat', 'utf8'));
    return { at: performance.now() / 1000, ...parseProcStat(readFileSync('/proc/stat', 'utf8')), own: self + children, children };
  } catch {
    return null;
  }
}

const s = (seconds: number): string => `${Math.round(seconds)} s`;

/** One paragraph: the run's wall time and how the cores' seconds were spent between two samples. */
export function describeCpu(start: CpuSample, end: CpuSample, cores = availableParallelism()): string {
  const wall = end.at - start.at;
  const busy = end.busy - start.busy;
  const own = end.own - start.own;
  const rest = Math.max(0, busy - own);
  const idle = end.idle - start.idle + (end.iowait - start.iowait);
  const available = busy + idle;
  const share = (x: number): string => `${Math.round((100 * x) / (available || 1))} %`;
  return (
    `cores: ${s(wall)} of wall time on ${cores} cores (${s(available)} of CPU): this run's processes ${s(own)} (${share(own)}), ` +
    `the rest of the machine ${s(rest)} (${share(rest)}: a system PostgreSQL the tests use, the kernel, other services), idle ${s(idle)} (${share(idle)})`
  );
}
