// The fan-out row of the orders bench (issue 68): the same orders as the one-endpoint row, to an
// environment with four endpoints of different types. `POST /v2/orders` announces order.created,
// which three of them take (every type; order.created; order.created and order.paid): three
// deliveries an order. The fourth takes only order.paid: no delivery is ever made for it, so no
// claim reads a row of it (the receiver's count for its path stays 0, and the table says so).
// Goal: deliveries a second at least 0.8 of the one-endpoint row's, in the same run
// (orders-fan-out-table.ts).
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
