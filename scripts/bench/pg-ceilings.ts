// PostgreSQL's own ceilings for bench:api's PostgreSQL rows, measured on the bench's database
// in the same run: pgbench (32 clients, prepared statements, the server's fsync settings)
// running the statements a row's request runs, with nothing of the service around them, and
// for the read, the same query from Node through `pg` (pool 20, 32 loops): what the driver
// allows a Node process. New rows get fresh unique values (sequences made for the bench) and
// otherwise copy a row the server wrote, so they are as wide as the server's.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { typeParsers } from '../../server/store/postgres/db.ts';

export interface Ceiling {
  /** Transactions (or queries) a second, or null when it could not be measured. */
  rate: number | null;
  /** What was measured, or why nothing was. */
  note: string;
}

/** pgbench on PATH, or the one beside a system PostgreSQL; null when there is none. */
export function findPgbench(): string | null {
  for (const dir of (process.env.PATH ?? '').split(':')) if (dir && existsSync(join(dir, 'pgbench'))) return join(dir, 'pgbench');
  const root = '/usr/lib/postgresql';
  if (existsSync(root)) {
    for (const version of readdirSync(root).sort().reverse()) {
      const bin = join(root, version, 'bin', 'pgbench');
      if (existsSync(bin)) return bin;
    }
  }
  return null;
}

/** A column of `table` as pgbench writes it: a copied literal, or a fresh unique value. */
interface Column {
  name: string;
  type: string;
  unique: boolean;
}

async function columnsOf(db: pg.Client, table: string): Promise<Column[]> {
  // Columns with a default (seq, commit order) are left to it, as the server's inserts do.
  const r = await db.query<Column>(
    `SELECT a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type,
            EXISTS (SELECT 1 FROM pg_index i WHERE i.indrelid = a.attrelid AND i.indisunique AND a.attnum = ANY (i.indkey)) AS unique
       FROM pg_attribute a
      WHERE a.attrelid = $1::regclass AND a.attnum > 0 AND NOT a.attisdropped AND NOT a.atthasdef
      ORDER BY a.attnum`,
    [table],
  );
  return r.rows;
}

/**
 * `INSERT INTO table (…) VALUES (…)` copying the row `where` selects; unique columns other than
 * environment_id and type get `'pgb-' || nextval('pgbench_<table>')`, and `refs` name columns
 * set to another table's fresh id (currval of its sequence in this session).
 */
async function insertLike(db: pg.Client, table: string, where: string, refs: Record<string, string> = {}): Promise<string> {
  const { names, values } = await valuesLike(db, table, where, (col, type) => (refs[col] === undefined ? undefined : fresh(`currval('pgbench_${refs[col]}')`, type)));
  return `INSERT INTO ${table} (${names}) VALUES (${values});`;
}

const fresh = (seq: string, type: string): string => (type === 'text' ? `('pgb-' || ${seq})` : `${seq}::${type}`);

/** The column list and value expressions of insertLike; `ref` gives a column's expression instead. */
async function valuesLike(db: pg.Client, table: string, where: string, ref: (col: string, type: string) => string | undefined): Promise<{ names: string; values: string }> {
  const cols = await columnsOf(db, table);
  const literals = await db.query<Record<string, string>>(`SELECT ${cols.map((c) => `quote_nullable(${c.name}::text) AS ${c.name}`).join(', ')} FROM ${table} WHERE ${where} LIMIT 1`);
  const row = literals.rows[0];
  if (row === undefined) throw new Error(`pgbench: no ${table} row to copy (${where})`);
  await db.query(`CREATE SEQUENCE IF NOT EXISTS pgbench_${table}`);
  const values = cols.map((c) => {
    const given = ref(c.name, c.type);
    if (given !== undefined) return given;
    if (c.unique && c.name !== 'environment_id' && c.name !== 'type') return fresh(`nextval('pgbench_${table}')`, c.type);
    return `${row[c.name]}::${c.type}`;
  });
  return { names: cols.map((c) => c.name).join(', '), values: values.join(', ') };
}

/** How many orders the batched script writes in each of its transactions. */
export const BATCHED_ORDERS = 16;

/**
 * The orders row's rows, BATCHED_ORDERS orders a transaction and one statement a table (orders;
 * events with their deliveries): what PostgreSQL does when a batch's orders are sent as one
 * statement instead of one each, as the group commit sends them today.
 */
async function batchedOrders(db: pg.Client): Promise<string> {
  const order = await valuesLike(db, 'orders', 'TRUE', () => undefined);
  const event = await valuesLike(db, 'events', `type LIKE 'order.%'`, () => undefined);
  const delivery = await valuesLike(db, 'deliveries', 'TRUE', (col) => (col === 'event_id' ? 'ev.id' : undefined));
  const rows = `FROM generate_series(1, ${BATCHED_ORDERS})`;
  return [
    'BEGIN;',
    `INSERT INTO orders (${order.names}) SELECT ${order.values} ${rows};`,
    `WITH ev AS (INSERT INTO events (${event.names}) SELECT ${event.values} ${rows} RETURNING id) INSERT INTO deliveries (${delivery.names}) SELECT ${delivery.values} FROM ev;`,
    'END;',
  ].join('\n');
}

export interface Scripts {
  /** The list row's query: a page of 20 (and one more, to know of a next page) by the user index. */
  read: string;
  /** The payout row's writes: the transaction and the wallet debit, one database transaction. */
  payout: string;
  /** The orders row's three inserts (order, event, delivery), one database transaction. */
  order: string;
  /** The same rows for BATCHED_ORDERS orders, one statement a table (batchedOrders). */
  orderBatched: string;
}

/** The list query exactly as the store sends it (repos/transactions.ts, listByUser). */
export const LIST_QUERY = 'SELECT seq AS page_seq, * FROM transactions WHERE environment_id = $1 AND user_id = $2 ORDER BY created_at DESC, seq DESC LIMIT $3';

/** The list's environment: the one whose transactions the listed user has. */
async function listedEnvironment(db: pg.Client, listedUser: string): Promise<string> {
  const found = await db.query<{ environment_id: string }>('SELECT environment_id FROM transactions WHERE user_id = $1 LIMIT 1', [listedUser]);
  const environmentId = found.rows[0]?.environment_id;
  if (environmentId === undefined) throw new Error(`pgbench: no transactions of ${listedUser}`);
  return environmentId;
}

/** pgbench scripts of the rows' statements that ran (`listedUser` null: the reads did not), copying what the server wrote. */
export async function pgbenchScripts(url: string, listedUser: string | null, orders: boolean): Promise<Partial<Scripts> & { environmentId?: string }> {
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  try {
    const out: Partial<Scripts> & { environmentId?: string } = {};
    if (listedUser !== null) {
      const environmentId = await listedEnvironment(db, listedUser);
      const env = `'${environmentId.replaceAll("'", "''")}'`;
      const user = `'${listedUser.replaceAll("'", "''")}'`;
      out.environmentId = environmentId;
      out.read = `${LIST_QUERY.replace('$1', env).replace('$2', user).replace('$3', '21')};`;
      // A wallet change as small as the column allows, so the run never empties the wallet.
      out.payout = [
        'BEGIN;',
        await insertLike(db, 'transactions', `environment_id = ${env} AND type = 'payout'`),
        `UPDATE environments SET wallet_balance = wallet_balance + '-0.00000001'::numeric WHERE id = ${env} AND wallet_balance + '-0.00000001'::numeric >= 0;`,
        'END;',
      ].join('\n');
    }
    if (orders) {
      // The orders row's environment (the one with an endpoint), whichever it is.
      out.order = [
        'BEGIN;',
        await insertLike(db, 'orders', 'TRUE'),
        await insertLike(db, 'events', `type LIKE 'order.%'`),
        await insertLike(db, 'deliveries', 'TRUE', { event_id: 'events' }),
        'END;',
      ].join('\n');
      out.orderBatched = await batchedOrders(db);
    }
    return out;
  } finally {
    await db.end();
  }
}

/** Runs one pgbench script: `clients` clients, prepared statements, for `seconds`. */
export function pgbench(bin: string | null, url: string, script: string, seconds: number, clients: number): Promise<Ceiling> {
  if (bin === null) return Promise.resolve({ rate: null, note: 'pgbench not found (PATH, /usr/lib/postgresql/*/bin): not measured' });
  const dir = mkdtempSync(join(tmpdir(), 'pgbench-'));
  const file = join(dir, 'script.sql');
  writeFileSync(file, `${script}\n`);
  const args = ['-n', '-M', 'prepared', '-c', String(clients), '-j', '2', '-T', String(seconds), '-f', file, url];
  return new Promise((resolve) => {
    execFile(bin, args, { maxBuffer: 1 << 20 }, (err, stdout, stderr) => {
      rmSync(dir, { recursive: true, force: true });
      const tps = /tps = ([\d.]+) \(without initial connection time\)/.exec(stdout);
      const failed = /number of failed transactions: (\d+)/.exec(stdout);
      if (err || tps === null) return resolve({ rate: null, note: `pgbench failed: ${(stderr || String(err)).trim().split('\n').slice(-2).join(' ')}` });
      resolve({ rate: Math.round(Number(tps[1])), note: `pgbench -M prepared -c ${clients}${failed && failed[1] !== '0' ? `, ${failed[1]} failed` : ''}` });
    });
  });
}

/** The list query through `pg` as the server's pool has it (20 connections), `loops` callers for `seconds`. */
export async function driverLoop(url: string, environmentId: string, listedUser: string, seconds: number, loops = 32): Promise<Ceiling> {
  const pool = new pg.Pool({ connectionString: url, max: 20, types: typeParsers });
  // A connection still closing when the bench drops its database reports that: expected.
  pool.on('error', () => undefined);
  try {
    await pool.query(LIST_QUERY, [environmentId, listedUser, 21]);
    let done = 0;
    const until = performance.now() + seconds * 1000;
    const loop = async (): Promise<void> => {
      while (performance.now() < until) {
        await pool.query(LIST_QUERY, [environmentId, listedUser, 21]);
        done += 1;
      }
    };
    const started = performance.now();
    await Promise.all(Array.from({ length: loops }, loop));
    return { rate: Math.round((done * 1000) / (performance.now() - started)), note: `pg, pool 20, ${loops} loops` };
  } finally {
    await pool.end();
  }
}
