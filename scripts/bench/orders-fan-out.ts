// The fan-out row of the orders bench (issue 68): the same orders as the one-endpoint row, to an
// environment with four endpoints of different types. `POST /v2/orders` announces order.created,
// which three of them take (every type; order.created; order.created and order.paid): three
// deliveries an order. The fourth takes only order.paid: no delivery is ever made for it, so no
// claim reads a row of it (the receiver's count for its path stays 0, and the table says so).
// Goal: deliveries a second at least 0.8 of the one-endpoint row's, in the same run.
import { medianOf, type FloorRow } from './orders-floor.ts';

/** What the bench posts to /v2/webhooks/endpoints. */
export interface EndpointSpec {
  url: string;
  eventTypes?: string[];
}

/** The fan-out's endpoints: a path of the receiver each, and the types each takes. */
export const FAN_OUT = [
  { path: 'every' },
  { path: 'created', eventTypes: ['order.created'] },
  { path: 'created-paid', eventTypes: ['order.created', 'order.paid'] },
  { path: 'paid', eventTypes: ['order.paid'] },
] as const;

/** How many of them an order.created event goes to. */
export const FAN_OUT_DELIVERIES = FAN_OUT.filter((e) => !('eventTypes' in e) || (e.eventTypes as readonly string[]).includes('order.created')).length;

export const FAN_OUT_GOAL = 0.8;

export function fanOutEndpoints(receiverUrl: string): EndpointSpec[] {
  return FAN_OUT.map((e) => ({ url: `${receiverUrl}/${e.path}`, ...('eventTypes' in e ? { eventTypes: [...e.eventTypes] } : {}) }));
}

export const fanOutCase = (): string => `${FAN_OUT.length} endpoints (${FAN_OUT_DELIVERIES} take order.created)`;

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
