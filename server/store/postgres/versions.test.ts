import { describe, expect, it } from 'vitest';
import { MAX_AGE_MS, PgTransactionVersions, STALENESS_MS } from './versions.ts';

/** Versions on a clock the test moves. */
function versions(): { v: PgTransactionVersions; at(ms: number): void } {
  let now = 1_000_000;
  const v = new PgTransactionVersions(STALENESS_MS, MAX_AGE_MS, () => now);
  return { v, at: (ms) => void (now = ms) };
}

/** Sends a heartbeat and hears it back. */
function beat(v: PgTransactionVersions): void {
  const id = v.heartbeat();
  expect(id).not.toBeNull();
  v.heard(id!);
}

describe('PgTransactionVersions', () => {
  it('gives no version before a heartbeat came back, nor once the last one is older than the bound', () => {
    const { v, at } = versions();
    expect(v.of('env_a')).toBeNull();
    beat(v);
    expect(v.of('env_a')).not.toBeNull();
    at(1_000_000 + STALENESS_MS);
    expect(v.of('env_a')).not.toBeNull();
    at(1_000_000 + STALENESS_MS + 1);
    expect(v.of('env_a')).toBeNull();
  });

  it('one heartbeat at a time; a late answer to an older one proves nothing', () => {
    const { v, at } = versions();
    const first = v.heartbeat()!;
    expect(v.heartbeat()).toBeNull();
    v.lost();
    at(1_000_050);
    const second = v.heartbeat()!;
    v.heard(first);
    expect(v.of('env_a')).toBeNull();
    v.heard(second);
    expect(v.of('env_a')).not.toBeNull();
  });

  it('moves one environment for its writes, every environment when the listener was lost, and all of them every MAX_AGE_MS', () => {
    const { v, at } = versions();
    beat(v);
    const a0 = v.of('env_a');
    const b0 = v.of('env_b');
    v.committed(['env_a']);
    expect(v.of('env_a')).not.toBe(a0);
    expect(v.of('env_b')).toBe(b0);
    const a1 = v.of('env_a');
    v.lost();
    beat(v);
    expect(v.of('env_a')).not.toBe(a1);
    expect(v.of('env_b')).not.toBe(b0);
    const b1 = v.of('env_b');
    at(1_000_000 + MAX_AGE_MS);
    beat(v);
    expect(v.of('env_b')).not.toBe(b1);
  });

  it('caughtUp resolves with the first heartbeat sent after it was asked', async () => {
    const { v, at } = versions();
    const early = v.heartbeat()!;
    at(1_000_010);
    let done = false;
    const caught = v.caughtUp().then(() => void (done = true));
    v.heard(early);
    await Promise.resolve();
    expect(done).toBe(false);
    beat(v);
    await caught;
    expect(done).toBe(true);
  });
});
