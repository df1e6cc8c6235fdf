// Shared benchmark helpers: start the real server as a child process with a fresh data
// folder, read the demo tenant it prints, and summarise autocannon results.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { Result } from 'autocannon';
import { ROOT, bin } from '../lib/specs.ts';

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

export interface DemoTenant {
  tenantId: string;
  apiKey: string;
  apiHash: string;
  memberToken: string;
  callbackSecret: string;
}

export interface RunningServer {
  url: string;
  child: ChildProcess;
  tenant: DemoTenant;
  stop(): Promise<void>;
}

/** Starts `server/main.ts` on a free port and a fresh data folder; resolves once it listens. */
export async function startServer(env: NodeJS.ProcessEnv = {}): Promise<RunningServer> {
  const port = await freePort();
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'bench-'));
  const child = spawn(bin('tsx'), [path.join(ROOT, 'server', 'main.ts')], {
    cwd: ROOT,
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'warn', NODE_ENV: 'production', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  const tenant = await new Promise<DemoTenant>((resolve, reject) => {
    child.on('exit', (code) => reject(new Error(`server exited with ${code}\n${out}`)));
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const m = /Demo tenant created[^\n]*\n(\{[\s\S]*?\n\})/.exec(out);
      if (m?.[1]) resolve(JSON.parse(m[1]) as DemoTenant);
    });
  });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 100; i++) {
    if (await fetch(`${url}/healthz`).then((r) => r.ok, () => false)) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    child,
    tenant,
    stop: () =>
      new Promise((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

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

export { bin };
