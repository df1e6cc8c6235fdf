// The fan-out row's table (orders-fan-out.ts) beside the one-endpoint row of the same run.
import { medianOf, type FloorRow } from './orders-floor.ts';
import { FAN_OUT, FAN_OUT_DELIVERIES, FAN_OUT_GOAL, fanOutCase } from './orders-fan-out.ts';

/** The fan-out rows beside their store's one-endpoint row, medians of the rounds. */
export function fanOutTable(rows: readonly FloorRow[]): string {
  const lines = [
    '| store | case | orders/s | deliveries/s during the load (÷ orders) | one endpoint: deliveries/s | ÷ one endpoint | goal | Node CPU µs a delivery, one → fan-out | PostgreSQL CPU µs a delivery, one → fan-out | deliveries to the endpoint no order.created goes to |',
    '|---|---|---:|---:|---:|---:|---|---|---|---:|',
  ];
  for (const r of rows.filter((x) => x.endpoints === FAN_OUT.length)) {
    const one = rows.find((x) => x.store === r.store && x.endpoints === 1);
    const orders = medianOf(r.server, (x) => x.rps)!;
    const hooks = medianOf(r.server, (x) => x.webhooks)!;
    const oneHooks = one ? medianOf(one.server, (x) => x.webhooks)! : null;
    const ratio = oneHooks ? hooks / oneHooks : null;
    // CPU a delivery: the run's CPU an order over the deliveries an order makes.
    const perDelivery = (row: FloorRow | undefined, f: (x: FloorRow['server'][number]) => number | null, n: number): string => {
      const v = row ? medianOf(row.server, f) : null;
      return v === null ? '?' : String(Math.round(v / n));
    };
    const cpu = (f: (x: FloorRow['server'][number]) => number | null): string => `${perDelivery(one, f, 1)} → ${perDelivery(r, f, FAN_OUT_DELIVERIES)}`;
    const unrouted = r.receivedByPath?.[`/hooks/${FAN_OUT.at(-1)!.path}`] ?? 0;
    lines.push(
      `| ${r.store === 'sqlite' ? 'SQLite' : 'PostgreSQL'} | ${fanOutCase()} | ${orders} | ${hooks} (${(hooks / orders).toFixed(2)}) | ${oneHooks ?? '?'} | **${ratio?.toFixed(2) ?? '?'}** | ≥ ${FAN_OUT_GOAL} ${ratio !== null && ratio >= FAN_OUT_GOAL ? 'met' : 'not met'} | ${cpu((x) => x.cpuUs)} | ${r.store === 'postgres' ? cpu((x) => x.pgUs) : '–'} | ${unrouted} |`,
    );
  }
  return lines.join('\n');
}
