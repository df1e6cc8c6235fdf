import { describe, expect, it } from 'vitest';
import { newDeliveryId, newEventId, newOrderId } from './ids.ts';

// Ids are opaque to callers; what is tested here is what the stores rely on: the formats the
// contract gives them, uniqueness, and that ids made later sort later (index-friendly inserts).
const T = Date.UTC(2026, 10, 24, 6, 30);

describe('ids', () => {
  it('order ids are UUIDs of version 7 that carry their millisecond and sort by it', () => {
    const id = newOrderId(T);
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(Number.parseInt(id.replace(/-/g, '').slice(0, 12), 16)).toBe(T);
    const later = [T + 1, T + 1000, T + 86_400_000].map((t) => newOrderId(t));
    expect([...later].reverse().sort()).toEqual(later);
    expect(newOrderId(T) < later[0]!).toBe(true);
  });

  it('event ids are 64 lowercase hex characters: the millisecond, then 208 random bits', () => {
    const id = newEventId(T);
    expect(id).toMatch(/^[0-9a-f]{64}$/);
    expect(Number.parseInt(id.slice(0, 12), 16)).toBe(T);
    expect(newEventId(T + 1) > newEventId(T)).toBe(true);
    // Out-of-range clocks still give the contract's format.
    expect(newEventId(-5)).toMatch(/^0{12}[0-9a-f]{52}$/);
    expect(newEventId(2 ** 48 + 3)).toMatch(/^0{11}3[0-9a-f]{52}$/);
  });

  it('ids of the same millisecond are distinct', () => {
    for (const make of [newOrderId, newEventId, newDeliveryId]) {
      const ids = new Set(Array.from({ length: 10_000 }, () => make(T)));
      expect(ids.size).toBe(10_000);
    }
  });
});
