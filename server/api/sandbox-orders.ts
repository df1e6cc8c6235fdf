// Handlers of the order operations of spec/sandbox.openapi.yaml: deposits, reviews and
// cancellations of test-environment orders. The router has already refused live keys.
import type { operations } from '../../generated/types/sandbox.ts';
import { cancelOrder } from '../domain/orders/cancel.ts';
import { recordDeposit } from '../domain/orders/deposits.ts';
import { markOrderForReview } from '../domain/orders/review.ts';
import type { HandlersFor } from '../http/handler-types.ts';
import { presentOrder, presentPayment } from './present/orders.ts';

// Exactly the three order operations; sandbox.ts merges them with the money operations.
export const sandboxOrderHandlers: Pick<HandlersFor<operations>, 'createSandboxDeposit' | 'markSandboxOrderForReview' | 'cancelSandboxOrder'> = {
  async createSandboxDeposit({ path, body }, { services, scope }) {
    const result = await recordDeposit(services, scope, path.orderId, body);
    return { status: 201, body: { order: presentOrder(result), payment: presentPayment(result.payment) } };
  },

  async markSandboxOrderForReview({ path, body }, { services, scope }) {
    return { status: 200, body: presentOrder(await markOrderForReview(services, scope, path.orderId, body.reason)) };
  },

  async cancelSandboxOrder({ path }, { services, scope }) {
    return { status: 200, body: presentOrder(await cancelOrder(services, scope, path.orderId)) };
  },
};
