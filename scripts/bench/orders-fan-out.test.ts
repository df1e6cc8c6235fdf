import { describe, expect, it } from 'vitest';
import type { FloorRow, Run } from './orders-floor.ts';
import { FAN_OUT, FAN_OUT_DELIVERIES, fanOutEndpoints } from './orders-fan-out.ts';
import { fanOutTable } from './orders-fan-out-table.ts';

const run = (rps: number, cpuUs: number, webhooks: number, pgUs: number | null = null): Run => ({ rps, p99: 5, errors: 0, non2xx: 0, cpuUs, pgUs, webhooks, goodput: rps, timeouts: 0, rssGrowthMb: null });

describe('the fan-out row of the orders bench', () => {
  it('has four endpoints of different types, three of which take the orders\' order.created', () => {
    const specs = fanOutEndpoints('http://127.0.0.1:1/hooks');
    expect(new Set(specs.map((s) => JSON.stringify(s.eventTypes ?? null))).size).toBe(FAN_OUT.length);
    expect(new Set(specs.map((s) => s.url)).size).toBe(FAN_OUT.length);
    expect(FAN_OUT_DELIVERIES).toBe(3);
  });

  it('compares its deliveries a second with the one-endpoint row of the same store, and counts CPU a delivery', () => {
    const rows: FloorRow[] = [
      { store: 'postgres', endpoints: 1, server: [run(2000, 300, 2000, 240)], floor: [], echo: [], baseline: [] },
      { store: 'postgres', endpoints: 4, server: [run(600, 900, 1800, 600)], floor: [], echo: [], baseline: [], receivedByPath: { '/hooks/every': 5, '/hooks/paid': 0 } },
    ];
    const row = fanOutTable(rows).split('\n')[2]!;
    expect(row).toContain('| 600 | 1800 (3.00) | 2000 | **0.90** | ≥ 0.8 met | 300 → 300 | 240 → 200 | 0 |');
  });
});
