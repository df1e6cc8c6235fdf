// GET /transactions/users answered from the cache of rendered pages (http/page-cache.ts): a
// repeated read is a hit, and every acknowledged write is seen by the reads after it. Counted
// through /metrics. (Across PostgreSQL instances: postgres/postgres.test.ts, transactionsVersion.)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../domain/clock.ts';
import { startTestServer, type TestServer, type TestTenant } from '../testing/harness.ts';
import { payout, staking, START } from './testing/transactions.ts';
import type { PostgresStore } from '../store/postgres/store.ts';

const TOKEN = 'list-cache-metrics-token-0123456789';
const clock = new ManualClock(START);
let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ clock, env: { RATE_LIMIT_RPS: '0', METRICS_TOKEN: TOKEN } });
});
afterAll(async () => {
  await server?.close();
});

/** hit and miss counts of http_list_cache_answers_total; null when the metric is absent (no cache). */
async function answers(): Promise<{ hit: number; miss: number } | null> {
  const text = await (await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })).text();
  const count = (result: string): number | null => {
    const m = new RegExp(`^http_list_cache_answers_total\\{result="${result}"\\} (\\d+)$`, 'm').exec(text);
    return m ? Number(m[1]) : null;
  };
  const hit = count('hit');
  const miss = count('miss');
  return hit === null || miss === null ? null : { hit, miss };
}

const list = (t: Pick<TestTenant, 'transactions'>, userId: string, limit?: number) =>
  t.transactions.GET('/transactions/users', { params: { query: { userId, ...(limit !== undefined ? { limit } : {}) } } });

describe('GET /transactions/users from the cache of rendered pages', () => {
  it('answers a repeated read from the cache, with its own request id and the same body and cursor', async () => {
    const t = await server.newTenant();
    for (let i = 0; i < 3; i++) await payout(t, { userId: 'u-cached', amount: i + 1 });
    const postgres = server.services.store.kind === 'postgres';
    if (postgres) await (server.services.store as PostgresStore).transactionsCaughtUp();
    const before = await answers();
    const first = await list(t, 'u-cached', 2);
    const second = await list(t, 'u-cached', 2);
    const after = await answers();
    expect(second.data).toEqual(first.data);
    expect(second.data).toHaveLength(2);
    expect(second.response.headers.get('next-cursor')).toBe(first.response.headers.get('next-cursor'));
    expect(second.response.headers.get('content-type')).toBe('application/json');
    expect(second.response.headers.get('x-request-id')).not.toBe(first.response.headers.get('x-request-id'));
    if (postgres) {
      // A hit as on SQLite; but PostgreSQL gives no version (and the cache is left alone) while
      // its last heartbeat is older than its staleness bound, which a stalled event loop can make
      // so; and the version may move between the two reads (a listener that reconnected moves
      // its epoch), when the second misses again. Never a hit on a page the first did not render.
      expect([[1, 1], [0, 1], [0, 2], [0, 0]]).toContainEqual([after!.hit - before!.hit, after!.miss - before!.miss]);
      return;
    }
    expect(after!.miss - before!.miss).toBe(1);
    expect(after!.hit - before!.hit).toBe(1);
  });

  it('shows every acknowledged write to the reads after it: a new payout, a revocation', async () => {
    const t = await server.newTenant();
    const first = await payout(t, { userId: 'u-writes', amount: 5 });
    expect((await list(t, 'u-writes')).data?.map((x) => x.id)).toEqual([first.data!.transactionId]);
    expect((await list(t, 'u-writes')).data).toHaveLength(1);

    clock.set(START + 1000);
    const second = await payout(t, { userId: 'u-writes', amount: 6 });
    expect((await list(t, 'u-writes')).data?.map((x) => x.id)).toEqual([second.data!.transactionId, first.data!.transactionId]);

    const st = await staking(t, { userId: 'u-writes' });
    expect((await list(t, 'u-writes')).data?.[0]).toMatchObject({ id: st.data!.transactionId, status: 'active' });
    const revoked = await t.transactions.POST('/transactions/staking/payout/revoke', { body: { transactionId: st.data!.transactionId } });
    expect(revoked.response.status).toBe(200);
    expect((await list(t, 'u-writes')).data?.[0]).toMatchObject({ id: st.data!.transactionId, status: 'revoked' });
  });

  it('keeps each environment\'s pages apart: the same user id in another tenant or environment reads its own', async () => {
    const a = await server.newTenant();
    const b = await server.newTenant();
    await payout(a, { userId: 'u-shared', amount: 7 });
    expect((await list(a, 'u-shared')).data).toHaveLength(1);
    expect((await list(a, 'u-shared')).data).toHaveLength(1);
    expect((await list(b, 'u-shared')).data).toEqual([]);
    const live = await server.keyWith(a, ['payouts', 'transactions_read'], 'live');
    expect((await list(live, 'u-shared')).data).toEqual([]);
    // A write in b moves nothing of a's: a's page is still answered, and still right.
    await payout(b, { userId: 'u-shared', amount: 8 });
    expect((await list(a, 'u-shared')).data).toHaveLength(1);
    expect((await list(b, 'u-shared')).data).toHaveLength(1);
  });
});
