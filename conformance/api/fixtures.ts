// What each operation needs beyond its documented examples to succeed: the ids of existing
// state (an order, a pending payout, an active staking payout, ...) and values that only the
// caller knows (a service account's e-mail, a webhook URL the implementation accepts).
//
// Most operations need nothing here: their valid request comes from the examples alone. An
// operation the table does not name gets its path ids by parameter name (orderId, endpointId,
// deliveryId, transactionId), so a new operation on an existing resource works without an edit.
// Under --skip-stateful nothing is created and the examples are sent as documented.
import type { ApiOperation } from '../core/openapi/contract.ts';
import type { RequestParts } from '../core/openapi/requests.ts';
import { Unavailable } from './state.ts';
import type { ApiState } from './state.ts';

/** `success`: the request must succeed (consumes fresh state); `negative`: only its shape matters. */
export type Purpose = 'success' | 'negative';

type Provider = (state: ApiState, parts: RequestParts, purpose: Purpose) => Promise<RequestParts>;

const withPath = (parts: RequestParts, path: Record<string, string>): RequestParts => ({ ...parts, path: { ...parts.path, ...path } });
const withQuery = (parts: RequestParts, query: Record<string, string>): RequestParts => ({ ...parts, query: { ...parts.query, ...query } });
const withBody = (parts: RequestParts, body: Record<string, unknown>): RequestParts => ({ ...parts, body: { ...(parts.body as object), ...body } });

const PROVIDERS: Record<string, Provider> = {
  revokeStakingPayout: async (s, p, purpose) => withBody(p, { transactionId: (await s.staking(purpose === 'success')).transactionId }),
  listUserTransactions: async (s, p) => {
    const payout = await s.payout(false);
    return withQuery(p, { userId: payout.userId, transactionId: payout.transactionId });
  },
  searchTransaction: async (s, p) => {
    const paid = await s.paidOrder();
    return withQuery(p, { orderNumber: paid.orderNumber, txHash: paid.txHash });
  },
  refundPayment: async (s, p, purpose) => {
    if (purpose === 'negative') return p;
    const payment = await s.payment(true);
    return withBody(p, { txId: payment.transactionId, email: s.refundEmail() });
  },
  createWebhookEndpoint: async (s, p) => withBody(p, { url: s.webhookUrl() }),
  updateWebhookEndpoint: async (s, p, purpose) =>
    purpose === 'success' ? withBody(withPath(p, { endpointId: await s.ownEndpoint() }), { url: s.webhookUrl() }) : withPath(p, { endpointId: (await s.endpoint()).id }),
  rotateWebhookSecret: async (s, p, purpose) => withPath(p, { endpointId: purpose === 'success' ? await s.ownEndpoint() : (await s.endpoint()).id }),
  retryDelivery: async (s, p, purpose) => withPath(p, { deliveryId: purpose === 'success' ? (await s.failedDelivery()).id : (await s.testDelivery()).id }),
  createSandboxDeposit: async (s, p, purpose) => withPath(p, { orderId: (await s.order(purpose === 'success')).orderId }),
  markSandboxOrderForReview: async (s, p, purpose) => withPath(p, { orderId: (await s.order(purpose === 'success')).orderId }),
  cancelSandboxOrder: async (s, p, purpose) => withPath(p, { orderId: (await s.order(purpose === 'success')).orderId }),
  settleSandboxPayout: async (s, p, purpose) => withPath(p, { transactionId: (await s.payout(purpose === 'success')).transactionId }),
  // An armed fault would fail the run's next write: the operation's own checks disarm (api/lost-commit.ts arms).
  injectSandboxWriteFault: async (_s, p) => withBody(p, { fault: 'none' }),
};

/** Path ids by parameter name, for operations the table does not name. */
const PATH_IDS: Record<string, (s: ApiState) => Promise<string>> = {
  orderId: async (s) => (await s.order(false)).orderId,
  endpointId: async (s) => (await s.endpoint()).id,
  deliveryId: async (s) => (await s.testDelivery()).id,
  transactionId: async (s) => (await s.payout(false)).transactionId,
};

/**
 * The request a check sends for `op`: the documented example with fresh identifiers and the
 * state it needs. Throws `Unavailable` when that state cannot be had.
 */
export async function prepareRequest(state: ApiState, op: ApiOperation, label: string, purpose: Purpose): Promise<RequestParts> {
  const example = state.exampleRequest(op, label);
  if (state.options.skipStateful) return example;
  try {
    return await withState(state, op, example, purpose);
  } catch (err) {
    // An invalid request is refused whatever its ids: the documented example ids do.
    if (purpose === 'negative' && err instanceof Unavailable) return example;
    throw err;
  }
}

async function withState(state: ApiState, op: ApiOperation, example: RequestParts, purpose: Purpose): Promise<RequestParts> {
  const provider = PROVIDERS[op.spec.operationId];
  if (provider) return provider(state, example, purpose);
  let parts = example;
  for (const p of op.spec.parameters) {
    const id = p.in === 'path' ? PATH_IDS[p.name] : undefined;
    if (id) parts = withPath(parts, { [p.name]: await id(state) });
  }
  return parts;
}

/** Side effects of a successful call that the run reports (the suite leaves them in place). */
export const SIDE_EFFECTS: Record<string, string> = {
  rotateCallbackSecret: "rotates the environment's callback secret: payout callbacks are signed with the new one from now on",
  fundSandboxWallet: 'adds to the test distribution wallet',
};
