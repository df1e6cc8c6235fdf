import { describe, expect, it } from 'vitest';
import { FLOOR_LEAN, floorTable, type FloorRow, type Run } from './orders-floor.ts';

const run = (rps: number, cpuUs: number, webhooks = 0): Run => ({ rps, p99: 5, errors: 0, non2xx: 0, cpuUs, pgUs: null, webhooks, goodput: rps, timeouts: 0, rssGrowthMb: null });

/** The cells of the table's row for `case` ("no endpoint" or "one endpoint"), by column name. */
function cells(table: string, kase: string): Record<string, string> {
  const [head, , ...rows] = table.split('\n');
  const split = (line: string): string[] => line.split(' | ').map((c) => c.replace(/^\| |\s*\|$/g, ''));
  const row = rows.find((r) => r.includes(`| ${kase} |`))!;
  const names = split(head!);
  return Object.fromEntries(split(row).map((c, i) => [names[i]!, c]));
}

describe('the orders floor table', () => {
  const rows: FloorRow[] = [
    // Medians: server 3 000, floor 6 000, echo 20 000 (0.30, not lean); CPU floor 110, echo 20.
    { store: 'sqlite', endpoints: 0, server: [run(3000, 200), run(2900, 210), run(3100, 190)], floor: [run(6000, 110), run(5000, 120), run(7000, 100)], echo: [run(20000, 20), run(19000, 21), run(25000, 19)], baseline: [] },
    // Medians: floor 4 000, echo 10 000 (0.40, lean).
    { store: 'sqlite', endpoints: 1, server: [run(2000, 400, 2000)], floor: [run(4000, 200)], echo: [run(10000, 22)], baseline: [] },
  ];

  it('prints floor ÷ echo of the medians and judges the floor without an endpoint lean at FLOOR_LEAN', () => {
    const table = floorTable(rows);
    expect(FLOOR_LEAN).toBe(0.38);
    expect(cells(table, 'no endpoint')).toMatchObject({
      'floor orders/s': '6000',
      'echo req/s': '20000',
      'floor ÷ echo': '**0.30** (lean ≥ 0.38 not met)',
      'echo CPU µs per request': '20',
      'Node CPU µs per order, floor → server': '110 → 200',
      'server ÷ floor': '**0.50**',
    });
    expect(cells(table, 'one endpoint')['floor ÷ echo']).toBe('0.40');
  });
});
