// until() polls with setTimeout and times out by Date.now(): under fake timers it would wait for
// ever, so it refuses at once, naming what it was asked to wait for.
import { afterEach, expect, it, vi } from 'vitest';
import { until } from './until.ts';

afterEach(() => {
  vi.useRealTimers();
});

it('refuses at once under vi.useFakeTimers(), naming what it would wait for', async () => {
  vi.useFakeTimers();
  await expect(until(() => false, 'the delivery', 50)).rejects.toThrow('until() cannot wait for the delivery under fake timers (vi.useFakeTimers())');
});

it('refuses when only Date is faked: its timeout would never come', async () => {
  vi.useFakeTimers({ toFake: ['Date'] });
  await expect(until(() => false, () => 'the line', 50)).rejects.toThrow('until() cannot wait for the line under fake timers');
});

it('with real timers, gives the first truthy value, and times out naming what it saw last', async () => {
  let n = 0;
  expect(await until(() => (++n >= 3 ? n : 0), 'three looks', { everyMs: 1 })).toBe(3);
  await expect(until(() => 'x'.length === 2, 'never', { timeoutMs: 0, everyMs: 1 })).rejects.toThrow('timed out after 0 ms waiting for never; last saw: false');
});
