// The order presenter writes each field of the contract's Order by hand (null → absent, times as
// ISO strings). An optional field added to the spec compiles without it, and every schema check
// still passes without it; this test does not: an order with every optional field set must
// present every property the contract's Order and OrderPayment define.
import { describe, expect, it } from 'vitest';
import { loadDocument } from '../../contract/operations.ts';
import type { EnvironmentRecord } from '../../domain/model.ts';
import { orderRecord, paymentRecord, T0 } from '../../store/suite/fixtures.ts';
import { presentOrder, presentPaymentList } from './orders.ts';

type Schema = { properties?: Record<string, Schema>; items?: Schema };

/** The 200 answer schema of an operation of the orders document (dereferenced, generated/). */
function answerSchema(path: string): Schema {
  const paths = loadDocument('orders').paths as Record<string, { get: { responses: Record<string, { content: Record<string, { schema: Schema }> }> } }>;
  const schema = paths[path]?.get.responses['200']?.content['application/json']?.schema;
  if (!schema) throw new Error(`no 200 answer for GET ${path}`);
  return schema;
}

const env: EnvironmentRecord = { id: 'env_present', tenantId: 'ten_present', name: 'test', walletBalance: '0', callbackSecretEnc: 'v1.x', createdAt: T0 };
// Every optional field set: an asset and its amount, a surplus, a review and its reason.
const order = orderRecord(env, 'ORD-000042', {
  assetId: 'USDC',
  networkId: 'ethereum',
  amountBaseUnits: '49990000',
  receivedBaseUnits: '50000000',
  overpaymentBaseUnits: '10000',
  paymentStatus: 'review_required',
  reviewReason: 'deposit_revoked',
});
const payment = paymentRecord(env, { orderId: order.id, status: 'completed', verified: true });

describe('the order presenter', () => {
  it('presents every property of the contract Order (and of its payments) when all are set', () => {
    const schema = answerSchema('/v2/orders/{orderId}');
    const body = presentOrder({ order, payments: [payment] });
    expect(Object.keys(body).sort()).toEqual(Object.keys(schema.properties ?? {}).sort());
    expect(Object.keys(body.payments[0] ?? {}).sort()).toEqual(Object.keys(schema.properties?.payments?.items?.properties ?? {}).sort());
  });

  it('presents every property of the contract OrderPaymentList when all are set', () => {
    const schema = answerSchema('/v2/orders/{orderId}/payments');
    expect(Object.keys(presentPaymentList({ order, payments: [payment] })).sort()).toEqual(Object.keys(schema.properties ?? {}).sort());
  });
});
