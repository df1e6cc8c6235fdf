// The request's view of the store: a write once the request's signal is aborted never reaches
// the store (the deadline may already have answered "nothing was written"), and the count of
// writes says whether one may have gone in.
import { describe, expect, it } from 'vitest';
import type { CallOptions, Store } from '../domain/store.ts';
import { CallCancelled } from '../domain/store-errors.ts';
import { RequestStore } from './request-store.ts';

/** A store whose writes resolve when told, recording the options each call was given. */
function recordingStore(): { store: Store; calls: Array<{ op: string; opts: CallOptions | undefined }>; finish(): void } {
  const calls: Array<{ op: string; opts: CallOptions | undefined }> = [];
  const waiting: Array<() => void> = [];
  const later = <T>(value: T): Promise<T> => new Promise((resolve) => waiting.push(() => resolve(value)));
  const store = {
    transaction: (_fn: unknown, opts?: CallOptions) => (calls.push({ op: 'transaction', opts }), later('written')),
    createOrder: (_c: unknown, opts?: CallOptions) => (calls.push({ op: 'createOrder', opts }), later({ created: true })),
    read: (_fn: unknown, opts?: CallOptions) => (calls.push({ op: 'read', opts }), Promise.resolve('read')),
  } as unknown as Store;
  return { store, calls, finish: () => waiting.splice(0).forEach((f) => f()) };
}

describe('RequestStore', () => {
  it('hands the request’s signal to every call', async () => {
    const { store, calls, finish } = recordingStore();
    const controller = new AbortController();
    const s = new RequestStore(controller.signal).wrap(store);
    const pending = [s.transaction(async () => 1), s.createOrder({} as never)];
    await s.read(async () => 1);
    finish();
    await Promise.all(pending);
    expect(calls.map((c) => [c.op, c.opts?.signal === controller.signal])).toEqual([
      ['transaction', true],
      ['createOrder', true],
      ['read', true],
    ]);
  });

  it('never sends a write to the store once the signal is aborted, and counts it as nothing written', async () => {
    const { store, calls } = recordingStore();
    const controller = new AbortController();
    const request = new RequestStore(controller.signal);
    const s = request.wrap(store);
    controller.abort(new Error('request deadline'));
    await expect(s.createOrder({} as never)).rejects.toBeInstanceOf(CallCancelled);
    await expect(s.transaction(async () => 1)).rejects.toBeInstanceOf(CallCancelled);
    expect(calls).toEqual([]);
    expect(request.mayHaveWritten()).toBe(false);
  });

  it('a write still running, or one that succeeded, may have written', async () => {
    const { store, finish } = recordingStore();
    const request = new RequestStore(new AbortController().signal);
    const s = request.wrap(store);
    expect(request.mayHaveWritten()).toBe(false);
    const write = s.transaction(async () => 1);
    expect(request.mayHaveWritten()).toBe(true);
    finish();
    await write;
    expect(request.mayHaveWritten()).toBe(true);
  });
});
