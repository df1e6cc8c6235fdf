// Shared benchmark helpers: the real server as a child process, autocannon summaries.
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

