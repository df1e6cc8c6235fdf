// Where PostgreSQL's CPU and writes went during a measured window, so a bench can say why a
// round cost what it did: CPU by process role, read from Linux's /proc every 250 ms (an
// autovacuum worker lives for seconds: two snapshots would miss it), and the cluster's WAL,
// full-page images, checkpoints and autovacuum runs, read from its statistics views.
import { readFileSync, readdirSync } from 'node:fs';
import pg from 'pg';
import { procTime } from './cpu.ts';

const HZ = 100;
const SAMPLE_MS = 250;
const ROLES = ['autovacuum worker', 'autovacuum launcher', 'checkpointer', 'background writer', 'walwriter'] as const;
export type PgRole = (typeof ROLES)[number] | 'postmaster' | 'backend' | 'other';

/** The role of a PostgreSQL process from its title ("postgres: 15/main: checkpointer"). */
export function roleOf(cmdline: string): PgRole {
  if (!cmdline.startsWith('postgres:')) return 'postmaster'; // titled by its path and options
  for (const role of ROLES) if (cmdline.includes(`: ${role}`)) return role;
  return /\d\(\d+\)|\[local\]/.test(cmdline) ? 'backend' : 'other'; // "user db 127.0.0.1(port) idle"
}

interface Proc {
  role: PgRole;
  /** The database an autovacuum worker works on, from its title. */
  database?: string;
  /** The title of a process of no known role. */
  title?: string;
  first: number;
  last: number;
}

type Sampled = Omit<Proc, 'first' | 'last'> & { time: number };

function readPostgres(): Map<number, Sampled> {
  const out = new Map<number, Sampled>();
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return out; // not Linux
  }
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    const p = procTime(Number(name));
    if (p?.comm !== 'postgres') continue;
    let cmdline: string;
    try {
      cmdline = readFileSync(`/proc/${name}/cmdline`, 'utf8').replaceAll('\0', ' ').trim();
    } catch {
      continue; // gone between the two reads
    }
    const role = roleOf(cmdline);
    const database = role === 'autovacuum worker' ? /autovacuum worker\s+(\S+)/.exec(cmdline)?.[1] : undefined;
    const title = role === 'other' ? cmdline.slice(0, 60) : undefined;
    out.set(Number(name), { role, database, title, time: p.time });
  }
  return out;
}

export interface PostgresCpu {
  /** CPU seconds of each role over the window. */
  byRole: Record<PgRole, number>;
  /** The autovacuum workers' CPU seconds by database. */
  autovacuumByDatabase: Record<string, number>;
  /** The CPU seconds of processes of no known role, by title. */
  otherByTitle: Record<string, number>;
}

/** Samples PostgreSQL's processes until stopped: where their CPU went over the window. */
export function samplePostgresCpu(): { stop(): PostgresCpu } {
  const procs = new Map<number, Proc>();
  const sample = (baseline: boolean): void => {
    for (const [pid, p] of readPostgres()) {
      const known = procs.get(pid);
      // A process born during the window counts from zero.
      if (known) known.last = p.time;
      else procs.set(pid, { ...p, first: baseline ? p.time : 0, last: p.time });
    }
  };
  sample(true);
  const timer = setInterval(() => sample(false), SAMPLE_MS);
  return {
    stop() {
      clearInterval(timer);
      sample(false);
      const byRole = Object.fromEntries([...ROLES, 'postmaster', 'backend', 'other'].map((r) => [r, 0])) as Record<PgRole, number>;
      const autovacuumByDatabase: Record<string, number> = {};
      const otherByTitle: Record<string, number> = {};
      for (const p of procs.values()) {
        const seconds = (p.last - p.first) / HZ;
        byRole[p.role] += seconds;
        if (p.database) autovacuumByDatabase[p.database] = (autovacuumByDatabase[p.database] ?? 0) + seconds;
        if (p.title && seconds > 0) otherByTitle[p.title] = (otherByTitle[p.title] ?? 0) + seconds;
      }
      return { byRole, autovacuumByDatabase, otherByTitle };
    },
  };
}

export interface PgCounters {
  walBytes: number;
  walFpi: number;
  checkpoints: number;
  autovacuums: number;
  autoanalyzes: number;
  deadTuples: number;
}

/** The cluster's WAL and checkpoints, and one database's autovacuum runs and dead tuples. */
export async function pgCounters(url: string): Promise<PgCounters> {
  // Bounded waits: a silent server fails the bench instead of hanging it.
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000, query_timeout: 5_000 });
  await client.connect();
  try {
    const { rows } = await client.query<Record<keyof PgCounters, string>>(`SELECT
      (SELECT wal_bytes FROM pg_stat_wal) AS "walBytes",
      (SELECT wal_fpi FROM pg_stat_wal) AS "walFpi",
      (SELECT checkpoints_timed + checkpoints_req FROM pg_stat_bgwriter) AS checkpoints,
      (SELECT coalesce(sum(autovacuum_count), 0) FROM pg_stat_user_tables) AS autovacuums,
      (SELECT coalesce(sum(autoanalyze_count), 0) FROM pg_stat_user_tables) AS autoanalyzes,
      (SELECT coalesce(sum(n_dead_tup), 0) FROM pg_stat_user_tables) AS "deadTuples"`);
    const r = rows[0]!;
    return Object.fromEntries(Object.entries(r).map(([k, v]) => [k, Number(v)])) as unknown as PgCounters;
  } finally {
    await client.end();
  }
}

export function diffCounters(a: PgCounters, b: PgCounters): PgCounters {
  return Object.fromEntries(Object.keys(a).map((k) => [k, b[k as keyof PgCounters] - a[k as keyof PgCounters]])) as unknown as PgCounters;
}
