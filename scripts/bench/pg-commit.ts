// npm run bench:commit [-- --n 2000]: what a PostgreSQL commit costs on this machine, and what
// synchronous_commit, commit_delay and batching change. On a throwaway database of the shared
// server, with settings made per session only (never the server's configuration):
//   - one client, one INSERT per autocommit transaction (the WAL flush of every commit, serial)
//   - 16 clients at once (PostgreSQL flushes the commits waiting together: its group commit)
//   - 16 clients with commit_delay = 200 µs (waits for more commits to join each flush)
//   - one client, 16 INSERTs per transaction (batching: one flush for 16 rows)
//   - one client with synchronous_commit = off: no flush wait. Shown for the price only: an
//     acknowledged write could be lost in a crash, so the service never uses it.
import { parseArgs } from 'node:util';
import pg from 'pg';
import { createTestDatabase } from '../../server/store/postgres/testing.ts';
import { machine } from './lib.ts';

const { values } = parseArgs({ options: { n: { type: 'string', default: '2000' } } });
const N = Number(values.n);
const db = await createTestDatabase();
const clients: pg.Client[] = [];
async function connect(settings: string[]): Promise<pg.Client> {
  const c = new pg.Client({ connectionString: db.url });
  await c.connect();
  for (const s of settings) await c.query(s);
  clients.push(c);
  return c;
}

async function run(name: string, conns: number, perTx: number, settings: string[]): Promise<string> {
  const cs = await Promise.all(Array.from({ length: conns }, () => connect(settings)));
  let next = 0;
  const started = performance.now();
  await Promise.all(
    cs.map(async (c) => {
      while (next < N) {
        const batch = Math.min(perTx, N - next);
        next += batch;
        if (perTx === 1) {
          await c.query({ name: 'ins', text: 'INSERT INTO t (v) VALUES ($1)', values: ['x'] });
        } else {
          await c.query('BEGIN');
          for (let i = 0; i < batch; i++) await c.query({ name: 'ins', text: 'INSERT INTO t (v) VALUES ($1)', values: ['x'] });
          await c.query('COMMIT');
        }
      }
    }),
  );
  const ms = performance.now() - started;
  await Promise.all(cs.map((c) => c.end()));
  clients.length = 0;
  return `| ${name} | ${conns} | ${perTx} | ${Math.round(N / (ms / 1000))} | ${((ms / N) * conns).toFixed(3)} |`;
}

try {
  const setup = await connect([]);
  await setup.query('CREATE TABLE t (id BIGSERIAL PRIMARY KEY, v TEXT NOT NULL)');
  await setup.end();
  const rows = [
    await run('autocommit INSERT, synchronous_commit = on', 1, 1, []),
    await run('autocommit INSERT, synchronous_commit = on', 16, 1, []),
    await run('autocommit INSERT, on, commit_delay = 200 µs, commit_siblings = 2', 16, 1, ['SET commit_delay = 200', 'SET commit_siblings = 2']),
    await run('16 INSERTs per transaction, on (batching)', 1, 16, []),
    await run('autocommit INSERT, synchronous_commit = off (NOT durable; for comparison)', 1, 1, ['SET synchronous_commit = off']),
  ];
  console.log(`\nbench:commit on ${machine()}; ${N} rows per run\n`);
  console.log('| run | clients | rows per commit | rows/s | ms per row per client |\n|---|---:|---:|---:|---:|');
  for (const r of rows) console.log(r);
} finally {
  await Promise.all(clients.map((c) => c.end().catch(() => undefined)));
  await db.drop();
}
