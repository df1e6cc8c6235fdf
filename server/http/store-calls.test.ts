// One request's store calls: a write once the request's signal is aborted never reaches the
// store (the deadline may already have answered "nothing was written"), and the count of a
// write request's writes says whether one may have gone in.
import { describe, expect, it } from 'vitest';
import { UniqueViolation, type CallOptions, type Store } from '../domain/store.ts';
import { CallCancelled } from '../domain/store-errors.ts';
import { StoreCalls } from './store-calls.ts';

/** A store whose writes settle when told (resolved, or rejected with the given error), recording the options each call was given. */
function recordingStore(): { store: Store; calls: Array<{ op: string; opts: CallOptions | undefined }>; finish(): void; fail(err: unknown): void } {
  const calls: Array<{ op: string; opts: CallOptions | undefined }> = [];
  const waiting: Array<{ resolve(): void; reject(err: unknown): void }> = [];
  const later = <T>(value: T): Promise<T> => new Promise((resolve, reject) => waiting.push({ resolve: () => resolve(value), reject }));
  const store = {
    transaction: (_fn: unknown, opts?: CallOptions) => (calls.push({ op: 'transaction', opts }), later('written')),
    createOrder: (_c: unknown, opts?: CallOptions) => (calls.push({ op: 'createOrder', opts }), later({ created: true })),
    read: (_fn: unknown, opts?: CallOptions) => (calls.push({ op: 'read', opts }), Promise.resolve('read')),
  } as unknown as Store;
  return {
    store,
    calls,
    finish: () => waiting.splice(0).forEach((w) => w.resolve()),
    fail: (err) => waiting.splice(0).forEach((w) => w.reject(err)),
  };
}

/** One write request's calls, on a client that stays. */
const writeRequest = (): StoreCalls => new StoreCalls(new Request('http://localhost/x', { method: 'POST' }), true);

describe('StoreCalls', () => {
  it('hands the request’s signal to every call', async () => {
    const { store, calls, finish } = recordingStore();
    const request = writeRequest();
    const s = request.wrap(store);
    const pending = [s.transaction(async () => 1), s.createOrder({} as never)];
    await s.read(async () => 1);
    finish();
    await Promise.all(pending);
    expect(calls.map((c) => [c.op, c.opts?.signal === request.signal])).toEqual([
      ['transaction', true],
      ['createOrder', true],
      ['read', true],
    ]);
  });

  it('never sends a write to the store once the signal is aborted, and counts it as nothing written', async () => {
    const { store, calls } = recordingStore();
    const request = writeRequest();
    const s = request.wrap(store);
    request.abort(new Error('request deadline'));
    await expect(s.createOrder({} as never)).rejects.toBeInstanceOf(CallCancelled);
    await expect(s.transaction(async () => 1)).rejects.toBeInstanceOf(CallCancelled);
    expect(calls).toEqual([]);
    expect(request.mayHaveWritten()).toBe(false);
  });

  it('a write still running, or one that succeeded, may have written', async () => {
    const { store, finish } = recordingStore();
    const request = writeRequest();
    const s = request.wrap(store);
    expect(request.mayHaveWritten()).toBe(false);
    const write = s.transaction(async () => 1);
    expect(request.mayHaveWritten()).toBe(true);
    finish();
    await write;
    expect(request.mayHaveWritten()).toBe(true);
  });

  it('a write started and then refused (cancelled at the abort, or by a store that cannot serve) wrote nothing', async () => {
    const { store, calls, fail } = recordingStore();
    const request = writeRequest();
    const s = request.wrap(store);
    const cancelled = s.createOrder({} as never);
    const refused = s.transaction(async () => 1);
    expect(calls.map((c) => c.op)).toEqual(['createOrder', 'transaction']);
    expect(request.mayHaveWritten()).toBe(true);
    const unavailable = Object.assign(new Error('database system is shutting down'), { code: '57P01' });
    fail(new CallCancelled());
    await expect(cancelled).rejects.toBeInstanceOf(CallCancelled);
    await expect(refused).rejects.toBeInstanceOf(CallCancelled);
    expect(request.mayHaveWritten()).toBe(false);
    const third = s.transaction(async () => 1);
    fail(unavailable);
    await expect(third).rejects.toBe(unavailable);
    expect(request.mayHaveWritten()).toBe(false);
  });

  it('a write refused with a unique violation reached the store: it may have written', async () => {
    const { store, fail } = recordingStore();
    const request = writeRequest();
    const write = request.wrap(store).transaction(async () => 1);
    fail(new UniqueViolation('third_party_id'));
    await expect(write).rejects.toBeInstanceOf(UniqueViolation);
    expect(request.mayHaveWritten()).toBe(true);
  });

  it('a read request counts no writes, yet refuses one once its signal is aborted', async () => {
    const { store, calls, finish } = recordingStore();
    const request = new StoreCalls(new Request('http://localhost/x'), false);
    const s = request.wrap(store);
    const write = s.transaction(async () => 1);
    expect(request.mayHaveWritten()).toBe(false);
    finish();
    await write;
    expect(request.mayHaveWritten()).toBe(false);
    request.abort(new Error('request deadline'));
    await expect(s.transaction(async () => 1)).rejects.toBeInstanceOf(CallCancelled);
    expect(calls.map((c) => c.op)).toEqual(['transaction']);
  });

  it('makes no signal until a call wants one, and one whose client is already gone is aborted', () => {
    const client = new AbortController();
    const request = new StoreCalls(new Request('http://localhost/x', { signal: client.signal }), false);
    client.abort(new Error('client gone'));
    expect(request.signal.aborted).toBe(true);
    expect(request.signal.reason).toEqual(new Error('client gone'));
  });
});
