import { describe, expect, it } from 'vitest';
import { PageCache } from './page-cache.ts';

const page = (json: string, headers?: Record<string, string>) => ({ json, ...(headers ? { headers } : {}) });

describe('PageCache', () => {
  it('answers a page only at the version it was read at, and drops it once the version moved', () => {
    const cache = new PageCache(1 << 20);
    cache.set('a', '0.1', page('[1]', { 'Next-Cursor': 'c1' }));
    expect(cache.get('a', '0.1')).toEqual(page('[1]', { 'Next-Cursor': 'c1' }));
    expect(cache.get('b', '0.1')).toBeUndefined();
    expect(cache.get('a', '0.2')).toBeUndefined();
    // Dropped, not kept for the old version.
    expect(cache.get('a', '0.1')).toBeUndefined();
    expect(cache.size().entries).toBe(0);
    expect(cache.size().bytes).toBe(0);
    expect(cache.stats).toEqual({ hits: 1, misses: 3 });
  });

  it('stays within its bytes, the least recently used page going first', () => {
    const json = JSON.stringify('x'.repeat(400));
    const cache = new PageCache(8 * 1024);
    const keys = Array.from({ length: 12 }, (_, i) => `k${i + 1}`);
    for (const key of keys) cache.set(key, 'v', page(json));
    expect(cache.size().bytes).toBeLessThanOrEqual(8 * 1024);
    // About 1 kB each: eight fit, the four oldest went.
    expect(cache.size().entries).toBe(8);
    for (const key of keys.slice(0, 4)) expect(cache.get(key, 'v')).toBeUndefined();
    // Reading k5 makes it the most recent, so the next eviction takes k6 instead.
    expect(cache.get('k5', 'v')).toEqual(page(json));
    cache.set('k13', 'v', page(json));
    expect(cache.get('k6', 'v')).toBeUndefined();
    expect(cache.get('k5', 'v')).toEqual(page(json));
    expect(cache.size().bytes).toBeLessThanOrEqual(8 * 1024);
  });

  it('replaces a key in place and refuses a page larger than an eighth of the cache', () => {
    const cache = new PageCache(8 * 1024);
    cache.set('a', '1', page('[1]'));
    const one = cache.size();
    cache.set('a', '2', page('[2]'));
    expect(cache.size()).toEqual(one);
    expect(cache.get('a', '2')).toEqual(page('[2]'));
    cache.set('big', '1', page(JSON.stringify('y'.repeat(1024))));
    expect(cache.get('big', '1')).toBeUndefined();
    expect(cache.size().entries).toBe(1);
  });
});
