// Shared benchmark helpers: the real server as a child process, autocannon summaries, what a
// process group holds (/proc).
import { readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import type { Result } from 'autocannon';
export { freePort, startServer, type DemoTenant, type RunningServer, type StartOptions } from '../../server/testing/child-server.ts';

export interface Summary {
  name: string;
  requests: number;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
}

export function summarise(name: string, r: Result): Summary {
  return {
    name,
    requests: r.requests.total,
    rps: Math.round(r.requests.average),
    p50: r.latency.p50,
    p99: r.latency.p99,
    errors: r.errors + r.timeouts,
    non2xx: r.non2xx,
  };
}

export function table(rows: Summary[]): string {
  const head = '| run | requests | req/s | p50 ms | p99 ms | errors | non-2xx |\n|---|---:|---:|---:|---:|---:|---:|';
  return [head, ...rows.map((r) => `| ${r.name} | ${r.requests} | ${r.rps} | ${r.p50} | ${r.p99} | ${r.errors} | ${r.non2xx} |`)].join('\n');
}

export function machine(): string {
  return `${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
}

/** Every process of the group led by `pid`, from /proc. */
export function groupPids(pgid: number): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const fields = readFileSync(`/proc/${name}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
      if (Number(fields[2]) === pgid) out.push(Number(name));
    } catch {
      // gone
    }
  }
  return out;
}

/** Resident memory of the process group, MiB, and how many processes it has. */
export function groupRss(pgid: number): { mib: number; processes: number } {
  const pids = groupPids(pgid);
  let kib = 0;
  for (const pid of pids) {
    try {
      kib += Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
    } catch {
      // gone
    }
  }
  return { mib: Math.round(kib / 1024), processes: pids.length };
}

/** CPU seconds the process group has used: each live process's own and that of its children it has reaped (/proc/PID/stat, in clock ticks of 1/100 s). */
export function groupCpuSeconds(pgid: number): number {
  let ticks = 0;
  for (const pid of groupPids(pgid)) {
    try {
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
      ticks += [11, 12, 13, 14].reduce((sum, i) => sum + Number(fields[i] ?? 0), 0);
    } catch {
      // gone
    }
  }
  return ticks / 100;
}
