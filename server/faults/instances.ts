// Real servers (server/main.ts as child processes) on one PostgreSQL database, watched from
// outside as an operator would: /readyz sampled over time, the resident memory of each
// process, a SIGTERM whose exit is waited for only so long.
import { readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { pino } from 'pino';
import { loadConfig } from '../config.ts';
import { createTenant, type CreatedTenant } from '../domain/admin.ts';
import { openServices } from '../services.ts';
import { startServer, type RunningServer } from '../testing/child-server.ts';
import { realTimers, type Timers } from '../timers.ts';
import { serverLagMs } from './server-lag.ts';

export interface Instances {
  servers: RunningServer[];
  tenant: CreatedTenant;
  urls: string[];
  /** The SECRETS_KEY they share: an instance started later on the same data needs it to sign. */
  secretsKey: string;
  /** Each one's longest event-loop stall since the previous call (their /metrics), in ms. */
  stallsMs(): Promise<number[]>;
  /** Sends SIGTERM to all; SIGKILL to any still running after graceMs. Returns each exit's ms, or null when killed. */
  stop(graceMs: number): Promise<Array<number | null>>;
}

/** A tenant made straight on the database (as `npm run admin -- tenant create` does). */
async function provision(databaseUrl: string, secretsKey: string): Promise<CreatedTenant> {
  const config = loadConfig({ DATABASE_URL: databaseUrl, SECRETS_KEY: secretsKey, NODE_ENV: 'test' });
  const { services } = await openServices(config, pino({ level: 'silent' }));
  try {
    return await createTenant(services, { name: 'Fault Matrix Merchant' });
  } finally {
    await services.store.close();
  }
}

/**
 * N instances on databaseUrl (through the fault proxy), and a tenant provisioned on
 * directUrl (the same database, never faulted) once the first instance has migrated it.
 */
export async function startInstances(n: number, databaseUrl: string, directUrl: string, env: NodeJS.ProcessEnv = {}): Promise<Instances> {
  const shared = {
    DATABASE_URL: databaseUrl,
    SECRETS_KEY: randomBytes(32).toString('base64url'),
    // Loopback webhook URLs are a development setting.
    NODE_ENV: 'development',
    WEBHOOK_ALLOW_INSECURE_URLS: 'true',
    RATE_LIMIT_RPS: '0',
    METRICS_TOKEN: randomBytes(24).toString('base64url'),
    ...env,
  };
  const servers: RunningServer[] = [];
  try {
    for (let i = 0; i < n; i++) servers.push(await startServer({ env: shared }));
  } catch (err) {
    for (const s of servers) s.child.kill('SIGKILL');
    throw err;
  }
  const tenant = await provision(directUrl, shared.SECRETS_KEY);
  return {
    servers,
    tenant,
    urls: servers.map((s) => s.url),
    secretsKey: shared.SECRETS_KEY,
    stallsMs: () => Promise.all(servers.map((s) => (s.child.exitCode === null && s.child.signalCode === null ? serverLagMs(s.url, shared.METRICS_TOKEN) : 0))),
    stop: (graceMs) => Promise.all(servers.map((s) => stopBounded(s, graceMs))),
  };
}

async function stopBounded(s: RunningServer, graceMs: number, timers: Timers = realTimers): Promise<number | null> {
  if (s.child.exitCode !== null || s.child.signalCode !== null) return 0;
  const started = Date.now();
  const exited = new Promise<number>((resolve) => s.child.once('exit', () => resolve(Date.now() - started)));
  s.child.kill('SIGTERM');
  let handle: unknown;
  const killed = new Promise<null>((resolve) => {
    handle = timers.setTimeout(() => resolve(null), graceMs);
  });
  const first = await Promise.race([exited, killed]);
  timers.clearTimeout(handle);
  if (first === null) {
    s.child.kill('SIGKILL');
    await exited;
  }
  return first;
}

export interface ReadySample {
  /** When the sample was sent (its answer is pushed when it comes: samples overlap). */
  at: number;
  instance: number;
  status: number;
  detail?: string;
}

export interface Watcher {
  readonly ready: readonly ReadySample[];
  /** Largest resident set seen per instance, and the first, in MB. */
  rss(): Array<{ first: number; max: number }>;
  stop(): void;
}

function rssMb(pid: number | undefined): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

/**
 * How long a /readyz sample waits for its answer: past the server's store probe (2 s,
 * observability/readiness.ts), which a /readyz that comes while the database is silent waits
 * out before it answers 503. A sample cut off sooner reads "not ready" as no answer.
 */
export const READYZ_WAIT_MS = 5_000;

/**
 * Samples /readyz and the memory of every instance each everyMs. An open loop: each sample goes
 * on its own, so a slow answer delays neither the next sample nor another instance's, and a
 * short stretch of an outage holds several samples even when the machine is loaded.
 */
export function watchInstances(inst: Instances, everyMs: number, timers: Timers = realTimers): Watcher {
  const ready: ReadySample[] = [];
  const mem = inst.servers.map((s) => ({ first: rssMb(s.child.pid), max: rssMb(s.child.pid) }));
  let timer: unknown = null;
  let running = true;
  const sample = async (s: RunningServer, i: number): Promise<void> => {
    const at = Date.now();
    const r = await fetch(`${s.url}/readyz`, { signal: AbortSignal.timeout(READYZ_WAIT_MS) }).catch(() => null);
    const body = r ? ((await r.json().catch(() => ({}))) as { detail?: string }) : {};
    ready.push({ at, instance: i, status: r?.status ?? 0, ...(body.detail ? { detail: body.detail } : {}) });
  };
  const tick = (): void => {
    inst.servers.forEach((s, i) => {
      void sample(s, i);
      const m = mem[i] as { first: number; max: number };
      m.max = Math.max(m.max, rssMb(s.child.pid));
    });
    if (running) timer = timers.setTimeout(tick, everyMs);
  };
  tick();
  return {
    ready,
    rss: () => mem,
    stop() {
      running = false;
      if (timer !== null) timers.clearTimeout(timer);
    },
  };
}
