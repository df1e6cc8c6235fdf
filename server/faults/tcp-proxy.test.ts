// The fault proxy against a real PostgreSQL of the test's own (never the shared one on 5432),
// with plain pg clients: what each fault does to a connection, seen from both ends.
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FakeTimers } from '../delivery/testing.ts';
import { freePort } from '../testing/child-server.ts';
import { until } from '../../testing/until.ts';
import { startOwnPostgres, type OwnPostgres } from './own-postgres.ts';
import { startFaultProxy, type FaultProxy, type ProxyOptions } from './tcp-proxy.ts';

let own: OwnPostgres | string;
let direct: pg.Client;
beforeAll(async () => {
  own = startOwnPostgres(await freePort());
  if (typeof own === 'string') {
    process.stdout.write(`fault proxy tests skipped: ${own}\n`);
    return;
  }
  direct = new pg.Client({ connectionString: own.url() });
  await direct.connect();
  await direct.query('CREATE TABLE marks (id text PRIMARY KEY)');
}, 120_000);
afterAll(async () => {
  await direct?.end();
  if (typeof own !== 'string') own?.destroy();
});

const opened: Array<{ close(): Promise<void> | void }> = [];
afterEach(async () => {
  for (const o of opened.splice(0).reverse()) await o.close();
});

async function proxy(opts: Partial<ProxyOptions> = {}): Promise<FaultProxy> {
  const p = await startFaultProxy({ upstreamPort: (own as OwnPostgres).port, ...opts });
  opened.push(p);
  return p;
}

/** A pg client through port, whose failures are recorded, not thrown. */
async function clientVia(port: number, connect = true): Promise<{ c: pg.Client; errors: Error[]; connected: Promise<unknown> }> {
  const c = new pg.Client({ host: '127.0.0.1', port, user: 'postgres', database: 'postgres' });
  const errors: Error[] = [];
  c.on('error', (err) => errors.push(err));
  opened.push({ close: () => c.end().catch(() => undefined) });
  const connected = c.connect();
  connected.catch(() => undefined); // a test that expects the failure awaits it
  if (connect) await connected;
  return { c, errors, connected };
}

/** Settles to its outcome, or 'pending' (checked after the I/O of one turn). */
function watch<T>(p: Promise<T>): { state: () => 'pending' | 'done' | 'failed'; error: () => unknown } {
  let state: 'pending' | 'done' | 'failed' = 'pending';
  let error: unknown;
  p.then(
    () => (state = 'done'),
    (err: unknown) => ((state = 'failed'), (error = err)),
  );
  return { state: () => state, error: () => error };
}

const backendSees = async (text: string): Promise<boolean> =>
  (await direct.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_stat_activity WHERE query LIKE $1 AND pid <> pg_backend_pid()', [`%${text}%`])).rows[0]?.n !== 0;
const backendAlive = async (pid: number): Promise<boolean> =>
  (await direct.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_stat_activity WHERE pid = $1', [pid])).rows[0]?.n === 1;
const pidOf = async (c: pg.Client): Promise<number> => (await c.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid ?? 0;
const marked = async (id: string): Promise<boolean> => (await direct.query('SELECT 1 FROM marks WHERE id = $1', [id])).rowCount === 1;

describe('fault proxy', () => {
  it('passes a session through, counting bytes and connections', async (ctx) => {
    if (typeof own === 'string') return ctx.skip();
    const p = await proxy();
    const { c } = await clientVia(p.port);
    expect((await c.query<{ v: string }>("SELECT 'through' AS v")).rows[0]?.v).toBe('through');
    expect(p.counts.accepted).toBe(1);
    expect(p.counts.upstreamConnects).toBe(1);
    expect(p.counts.bytesToServer).toBeGreaterThan(0);
    expect(p.counts.bytesToClient).toBeGreaterThan(0);
    expect(p.open).toBe(1);
  });

  it('blackhole: holds every byte both ways without a reset, new connections too; all flows on heal', async (ctx) => {
    if (typeof own === 'string') return ctx.skip();
    const p = await proxy();
    const { c, errors } = await clientVia(p.port);
    p.blackhole();
    const sent = p.counts.bytesToServer;
    const q = c.query<{ v: string }>("SELECT 'held-query' AS v");
    const held = watch(q);
    await until(() => p.counts.bytesToServer > sent, 'the query reaches the proxy');
    const late = await clientVia(p.port, false);
    const lateConnect = watch(late.connected);
    await until(() => p.counts.accepted === 2, 'the new connection is accepted');
    // The server never saw the query, the new connection has no upstream, nobody was reset.
    expect(await backendSees('held-query')).toBe(false);
    expect(p.counts.upstreamConnects).toBe(1);
    expect(held.state()).toBe('pending');
    expect(lateConnect.state()).toBe('pending');
    expect(errors).toEqual([]);

    p.pass();
    expect((await q).rows[0]?.v).toBe('held-query');
    await late.connected;
    expect((await late.c.query('SELECT 1 AS one')).rows[0]).toEqual({ one: 1 });
    expect(p.counts.upstreamConnects).toBe(2);
    expect(p.counts.reset).toBe(0);
  });

  it('slow: each reply waits its delay on the proxy timers, in order', async (ctx) => {
    if (typeof own === 'string') return ctx.skip();
    const timers = new FakeTimers();
    let t = 0;
    const p = await proxy({ timers, now: () => t, random: () => 0.5 });
    const { c } = await clientVia(p.port);
    p.slow({ minMs: 1_000, maxMs: 3_000 });
    const q = watch(c.query("SELECT 'slow' AS v"));
    await until(() => p.counts.delayedChunks > 0, 'a reply is delayed');
    expect(timers.delays()).toEqual([2_000]);
    expect(q.state()).toBe('pending');
    t += 2_000;
    timers.fireAll();
    await until(() => q.state() === 'done', 'the reply is released');
    p.pass();
    expect((await c.query('SELECT 2 AS two')).rows[0]).toEqual({ two: 2 });
  });

  it('reset: every open connection gets an RST, new ones pass', async (ctx) => {
    if (typeof own === 'string') return ctx.skip();
    const p = await proxy();
    const a = await clientVia(p.port);
    const b = await clientVia(p.port);
    expect(p.reset()).toBe(2);
    await until(() => a.errors.length > 0 && b.errors.length > 0, 'both clients see the reset');
    expect(a.errors.map((e) => (e as NodeJS.ErrnoException).code)).toContain('ECONNRESET');
    const fresh = await clientVia(p.port);
    expect((await fresh.c.query('SELECT 3 AS three')).rows[0]).toEqual({ three: 3 });
    expect(p.counts.reset).toBe(2);
  });

  it('retarget with resets: old connections reset, new ones reach the new upstream', async (ctx) => {
    if (typeof own === 'string') return ctx.skip();
    const next = await proxy(); // the "promoted" host: the same data behind another port
    const p = await proxy();
    const old = await clientVia(p.port);
    p.retarget(next.port, 'reset');
    await until(() => old.errors.length > 0, 'the old client sees the reset');
    const fresh = await clientVia(p.port);
    expect((await fresh.c.query('SELECT 4 AS four')).rows[0]).toEqual({ four: 4 });
    expect(next.counts.accepted).toBe(1);
  });

  it('retarget with a silent old host: old clients hear nothing ever, their server sessions end, new ones pass', async (ctx) => {
    if (typeof own === 'string') return ctx.skip();
    const next = await proxy();
    const p = await proxy();
    const old = await clientVia(p.port);
    const pid = await pidOf(old.c);
    p.retarget(next.port, 'silent');
    const q = watch(old.c.query('SELECT 5'));
    await until(async () => !(await backendAlive(pid)), 'the old session ends on the server');
    const fresh = await clientVia(p.port);
    expect((await fresh.c.query('SELECT 6 AS six')).rows[0]).toEqual({ six: 6 });
    expect(next.counts.accepted).toBe(1);
    expect(q.state()).toBe('pending');
    expect(old.errors).toEqual([]);
    expect(p.counts.silenced).toBe(1);
    expect(p.open).toBe(2); // the silent one is still held open
  });

  it('cuts a COMMIT after the server ran it: the client sees a reset, the row is there', async (ctx) => {
    if (typeof own === 'string') return ctx.skip();
    const p = await proxy();
    p.cutCommits(1);
    const { c } = await clientVia(p.port);
    await c.query('BEGIN');
    await c.query('INSERT INTO marks VALUES ($1)', ['cut-in-block']);
    await expect(c.query('COMMIT')).rejects.toThrow();
    expect(await marked('cut-in-block')).toBe(true);
    expect(p.counts).toMatchObject({ commitsSeen: 1, commitsCut: 1, reset: 1 });
  });

  it('cuts a lone write (an implicit transaction committed at Sync), not reads nor writes in a block', async (ctx) => {
    if (typeof own === 'string') return ctx.skip();
    const p = await proxy();
    p.cutCommits(1);
    const { c } = await clientVia(p.port);
    expect((await c.query('SELECT $1::text AS v', ['read'])).rows[0]).toEqual({ v: 'read' });
    await c.query('BEGIN');
    await c.query('INSERT INTO marks VALUES ($1)', ['in-block']);
    expect(p.counts.commitsSeen).toBe(0);
    await c.query('ROLLBACK');
    await expect(c.query('WITH k AS (INSERT INTO marks VALUES ($1) RETURNING id) SELECT id FROM k', ['lone-write'])).rejects.toThrow();
    expect(await marked('lone-write')).toBe(true);
    expect(await marked('in-block')).toBe(false);
    expect(p.counts).toMatchObject({ commitsSeen: 1, commitsCut: 1 });
  });

  it('cuts only the given fraction of commits', async (ctx) => {
    if (typeof own === 'string') return ctx.skip();
    const draws = [0.9, 0.1];
    const p = await proxy({ random: () => draws.shift() ?? 0.9 });
    p.cutCommits(0.5);
    const { c } = await clientVia(p.port);
    await c.query('INSERT INTO marks VALUES ($1)', ['kept']); // draw 0.9: passes
    await expect(c.query('INSERT INTO marks VALUES ($1)', ['cut'])).rejects.toThrow(); // draw 0.1: cut
    expect(await marked('kept')).toBe(true);
    expect(await marked('cut')).toBe(true);
    expect(p.counts).toMatchObject({ commitsSeen: 2, commitsCut: 1 });
  });

  it('closes every connection it holds, silent ones too, and stops listening', async (ctx) => {
    if (typeof own === 'string') return ctx.skip();
    const next = await proxy();
    const p = await startFaultProxy({ upstreamPort: own.port });
    const silent = await clientVia(p.port);
    p.retarget(next.port, 'silent');
    const unanswered = silent.c.query('SELECT 7');
    p.blackhole();
    const held = await clientVia(p.port, false);
    await until(() => p.counts.accepted === 2, 'the held connection is accepted');
    await p.close();
    expect(p.open).toBe(0);
    // Closed by the proxy: a FIN ("Connection terminated"), or an RST (ECONNRESET) when the
    // client's bytes were still unread in the proxy's socket as it closed (a loaded machine).
    await expect(unanswered).rejects.toThrow(/terminated|ECONNRESET/);
    await expect(held.connected).rejects.toThrow(/terminated|ECONNRESET/);
    await expect(clientVia(p.port)).rejects.toThrow(/ECONNREFUSED/);
  });
});
