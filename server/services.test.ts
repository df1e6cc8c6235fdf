import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from './config.ts';
import { openStore } from './services.ts';
import type { Store } from './domain/store.ts';

// The nesting guard (store/nesting-guard.ts) costs a tenth of a request's CPU on Node 22, so
// production opens the store without it (CHECK_NESTED_TRANSACTIONS turns it on or off
// anywhere); elsewhere a store call from inside a transaction is refused. On a SQLite file a
// read goes to its own connection, so the call below can show the difference without waiting
// on the transaction it comes from.
describe('openStore', () => {
  let dir: string;
  let store: Store | undefined;
  afterEach(async () => {
    await store?.close();
    await rm(dir, { recursive: true, force: true });
  });

  const nestedRead = async (env: NodeJS.ProcessEnv): Promise<unknown> => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'services-'));
    store = (await openStore(loadConfig({ DATA_DIR: dir, ...env }))).store;
    await store.migrate();
    return store.transaction(() => store!.read(async () => 'read'));
  };

  it('refuses a store call from inside a transaction outside production', async () => {
    await expect(nestedRead({ NODE_ENV: 'test' })).rejects.toThrow(/nested store transaction/);
  });

  it('opens the store without the guard in production', async () => {
    await expect(nestedRead({ NODE_ENV: 'production' })).resolves.toBe('read');
  });

  it('follows CHECK_NESTED_TRANSACTIONS either way, and refuses any other value', async () => {
    await expect(nestedRead({ NODE_ENV: 'production', CHECK_NESTED_TRANSACTIONS: 'true' })).rejects.toThrow(/nested store transaction/);
    await store!.close();
    store = undefined;
    await rm(dir, { recursive: true, force: true });
    await expect(nestedRead({ NODE_ENV: 'test', CHECK_NESTED_TRANSACTIONS: 'false' })).resolves.toBe('read');
    expect(() => loadConfig({ CHECK_NESTED_TRANSACTIONS: 'yes' })).toThrow(/CHECK_NESTED_TRANSACTIONS must be true or false, not yes/);
  });
});

describe('LIST_CACHE_MB', () => {
  it('is 16 MB by default, 0 turns the cache off, and anything but whole megabytes from 0 to 1024 is refused', () => {
    expect(loadConfig({}).listCacheBytes).toBe(16 * 1024 * 1024);
    expect(loadConfig({ LIST_CACHE_MB: '0' }).listCacheBytes).toBe(0);
    expect(loadConfig({ LIST_CACHE_MB: '1024' }).listCacheBytes).toBe(1024 * 1024 * 1024);
    for (const bad of ['-1', '1.5', '1025', 'lots']) {
      expect(() => loadConfig({ LIST_CACHE_MB: bad })).toThrow(new RegExp(`LIST_CACHE_MB must be a whole number of megabytes from 0 to 1024, not ${bad}`));
    }
  });
});

describe('DELIVERY_WORKER', () => {
  it('is on by default; off only beside DATABASE_URL, where other instances deliver; anything else is refused', () => {
    expect(loadConfig({}).deliveryWorker).toBe(true);
    const pg = { DATABASE_URL: 'postgres://localhost/db', SECRETS_KEY: Buffer.alloc(32).toString('base64url') };
    expect(loadConfig({ ...pg, DELIVERY_WORKER: 'off' }).deliveryWorker).toBe(false);
    expect(() => loadConfig({ DELIVERY_WORKER: 'off' })).toThrow(/DELIVERY_WORKER=off needs DATABASE_URL/);
    expect(() => loadConfig({ ...pg, DELIVERY_WORKER: 'no' })).toThrow(/DELIVERY_WORKER must be on or off, not no/);
  });
});

describe('WEBHOOK_ENDPOINT_CONCURRENCY, WEBHOOK_ENDPOINT_MAX_CONCURRENCY, WEBHOOK_ENDPOINT_HEALTHY_MS', () => {
  it('start at 4, grow up to 32 (or the start, if larger), healthy within 500 ms; the max below the start and nonsense are refused', () => {
    expect(loadConfig({}).endpointConcurrency).toEqual({ initial: 4, max: 32, healthyMs: 500 });
    expect(loadConfig({ WEBHOOK_ENDPOINT_CONCURRENCY: '1', WEBHOOK_ENDPOINT_MAX_CONCURRENCY: '1', WEBHOOK_ENDPOINT_HEALTHY_MS: '10000' }).endpointConcurrency).toEqual({ initial: 1, max: 1, healthyMs: 10_000 });
    expect(loadConfig({ WEBHOOK_ENDPOINT_CONCURRENCY: '48' }).endpointConcurrency).toEqual({ initial: 48, max: 48, healthyMs: 500 });
    expect(() => loadConfig({ WEBHOOK_ENDPOINT_CONCURRENCY: '8', WEBHOOK_ENDPOINT_MAX_CONCURRENCY: '4' })).toThrow(/WEBHOOK_ENDPOINT_MAX_CONCURRENCY \(4\) must be at least WEBHOOK_ENDPOINT_CONCURRENCY \(8\)/);
    for (const bad of ['0', '-1', '1.5', '1025', 'many']) {
      expect(() => loadConfig({ WEBHOOK_ENDPOINT_CONCURRENCY: bad })).toThrow(new RegExp(`WEBHOOK_ENDPOINT_CONCURRENCY must be a whole number from 1 to 1024, not ${bad}`));
      expect(() => loadConfig({ WEBHOOK_ENDPOINT_MAX_CONCURRENCY: bad })).toThrow(new RegExp(`WEBHOOK_ENDPOINT_MAX_CONCURRENCY must be a whole number from 1 to 1024, not ${bad}`));
    }
    for (const bad of ['0', '10001', '0.5', 'fast']) {
      expect(() => loadConfig({ WEBHOOK_ENDPOINT_HEALTHY_MS: bad })).toThrow(new RegExp(`WEBHOOK_ENDPOINT_HEALTHY_MS must be a whole number from 1 to 10000, not ${bad}`));
    }
  });
});
