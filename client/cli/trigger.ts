// `payments-webhooks trigger <event>`: causes the event in the key's test environment through
// the order API and the sandbox, as a real payment would: order.paid creates an order and
// credits a verified deposit of its full amount (so order.created comes first), and so on.
import { randomBytes } from 'node:crypto';
import { createOrdersClient, createSandboxClient } from '../api.ts';
import type { TriggerArgs } from './args.ts';
import { CliError, checkTestKey, refusal } from './preflight.ts';
import type { Output } from './printer.ts';

const ORDER = { amountMinor: 4999, assetId: 'USDC', networkId: 'ethereum', amountBaseUnits: '49990000' } as const;

type Answer<T> = { data?: T; error?: unknown; response: Response };

function dataOf<T>(r: Answer<T>): T {
  if (r.data !== undefined) return r.data;
  throw refusal(r.response.status, r.error as { type?: string; detail?: string });
}

export async function trigger(args: TriggerArgs, output: Output, fetchImpl?: typeof fetch): Promise<void> {
  await checkTestKey(args, fetchImpl);
  const creds = { baseUrl: args.baseUrl, apiKey: args.apiKey, apiHash: args.apiSecret, ...(fetchImpl ? { fetch: fetchImpl } : {}) };
  const orders = createOrdersClient(creds);
  const sandbox = createSandboxClient(creds);
  try {
    if (args.event === 'webhook.test') {
      const event = dataOf(await sandbox.POST('/sandbox/events/test'));
      output.out(`Triggered webhook.test: event ${event.id}`);
      return;
    }
    const order = dataOf(await orders.POST('/v2/orders', { body: { merchantReference: `trigger-${Date.now()}`, ...ORDER } }));
    const path = { params: { path: { orderId: order.orderId } } };
    if (args.event === 'order.paid') {
      const txHash = `0x${randomBytes(32).toString('hex')}`;
      dataOf(await sandbox.POST('/sandbox/orders/{orderId}/deposits', { ...path, body: { amountBaseUnits: ORDER.amountBaseUnits, verified: true, txHash } }));
    } else if (args.event === 'order.payment_review_required') {
      dataOf(await sandbox.POST('/sandbox/orders/{orderId}/review', { ...path, body: { reason: 'late_or_missing_inclusion' } }));
    }
    const events = args.event === 'order.created' ? 'order.created' : `order.created, ${args.event}`;
    output.out(`Triggered ${args.event} on order ${order.orderId} (${order.orderNumber}): events ${events}`);
  } catch (err) {
    if (err instanceof CliError) throw err;
    throw new CliError(`cannot reach the service at ${args.baseUrl} (${err instanceof Error ? err.message : String(err)})`);
  }
}
