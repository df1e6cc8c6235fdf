// `payments-webhooks trigger <event>`: causes the event in the key's test environment through
// the order API and the sandbox, as a real payment would: order.paid creates an order and
// credits a verified deposit of its full amount (so order.created comes first), and so on.
// The order is the event's example data, with the merchant's overrides (trigger-data.ts).
import { randomBytes } from 'node:crypto';
import type { components } from '../../generated/types/sandbox.ts';
import { createOrdersClient, createSandboxClient } from '../api.ts';
import type { TriggerArgs } from './args.ts';
import { CliError, checkTestKey, refusal } from './preflight.ts';
import type { Output } from './printer.ts';
import { triggerData } from './trigger-data.ts';

/** The sandbox checks the reason against its own list; a value outside it is its 400. */
type ReviewReason = components['schemas']['ReviewReason'];

type Answer<T> = { data?: T; error?: unknown; response: Response };

function dataOf<T>(r: Answer<T>): T {
  if (r.data !== undefined) return r.data;
  throw refusal(r.response.status, r.error as { type?: string; detail?: string });
}

export async function trigger(args: TriggerArgs, output: Output, fetchImpl?: typeof fetch): Promise<void> {
  // Checked before anything is sent: bad data causes nothing.
  const { data, changed } = triggerData(args);
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
    const field = (name: string): string => String(data[name]);
    const body = {
      // A reference of its own unless asked: the example's would repeat on every trigger.
      merchantReference: changed.includes('merchantReference') ? field('merchantReference') : `trigger-${Date.now()}`,
      amountMinor: data.amountMinor as number,
      assetId: field('assetId'),
      networkId: field('networkId'),
      amountBaseUnits: field('amountBaseUnits'),
    };
    const order = dataOf(await orders.POST('/v2/orders', { body }));
    const path = { params: { path: { orderId: order.orderId } } };
    if (args.event === 'order.paid') {
      const txHash = `0x${randomBytes(32).toString('hex')}`;
      dataOf(await sandbox.POST('/sandbox/orders/{orderId}/deposits', { ...path, body: { amountBaseUnits: body.amountBaseUnits, verified: true, txHash } }));
    } else if (args.event === 'order.payment_review_required') {
      dataOf(await sandbox.POST('/sandbox/orders/{orderId}/review', { ...path, body: { reason: changed.includes('reviewReason') ? (field('reviewReason') as ReviewReason) : 'late_or_missing_inclusion' } }));
    }
    const events = args.event === 'order.created' ? 'order.created' : `order.created, ${args.event}`;
    output.out(`Triggered ${args.event} on order ${order.orderId} (${order.orderNumber}): events ${events}`);
  } catch (err) {
    if (err instanceof CliError) throw err;
    throw new CliError(`cannot reach the service at ${args.baseUrl} (${err instanceof Error ? err.message : String(err)})`);
  }
}
