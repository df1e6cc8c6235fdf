// Mocked webhooks: any message of the AsyncAPI document, built from the document's own examples,
// signed and sent as the delivery engine sends it (server/delivery/sign.ts: Service-Signature
// over `<t>.<raw body>`, Service-Event-Id, User-Agent; server/delivery/sender.ts), to a URL the
// developer gives.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createSender, type Sender } from '../../server/delivery/sender.ts';
import { buildDeliveryRequest } from '../../server/delivery/sign.ts';
import { createDestinationPolicy, type DestinationPolicy } from '../../server/destination/policy.ts';
import type { EventRecord, EventType } from '../../server/domain/model.ts';
import { newEventId } from '../../server/domain/ids.ts';
import { GENERATED_DIR } from '../lib/specs.ts';

type Obj = Record<string, unknown>;

export interface MockEvent {
  /** The message name, as the `type` of the events (`order.paid`, `payout.completed`, ...). */
  name: string;
  /** The example names, in document order; the first is the default. */
  examples: Array<{ name: string; payload: Obj }>;
}

/** The messages of generated/asyncapi/webhooks.json with their examples. */
export function mockEvents(): MockEvent[] {
  const doc = JSON.parse(readFileSync(path.join(GENERATED_DIR, 'asyncapi', 'webhooks.json'), 'utf8')) as Obj;
  const messages = ((doc.components as Obj).messages ?? {}) as Record<string, Obj>;
  return Object.values(messages).map((m) => ({
    name: String(m.name),
    examples: ((m.examples as Obj[] | undefined) ?? []).map((e) => ({ name: String(e.name), payload: e.payload as Obj })),
  }));
}

export class UnknownEventError extends Error {
  override readonly name = 'UnknownEventError';
}

export interface SendOptions {
  /** A message name of the AsyncAPI document (`order.paid`). */
  event: string;
  /** An example name of that message; default the first. */
  example?: string;
  /** A fresh event id (and body `id`) instead of the example's, so a receiver does not see a duplicate. */
  newId?: boolean;
  to: string;
  secret: string;
  /** Milliseconds since the epoch; default Date.now (the signature's `t`). */
  now?: number;
}

export interface SendResult {
  event: string;
  example: string;
  eventId: string;
  /** The receiver's status, or null when it could not be reached. */
  status: number | null;
  error?: string;
}

/** The body and event id of one mocked event, from the document's example. */
export function mockEventRecord(events: readonly MockEvent[], opts: Pick<SendOptions, 'event' | 'example' | 'newId' | 'now'>): { record: EventRecord; example: string } {
  const message = events.find((e) => e.name === opts.event);
  if (!message) throw new UnknownEventError(`unknown event ${opts.event}; the AsyncAPI document has ${events.map((e) => e.name).join(', ')}`);
  const example = opts.example === undefined ? message.examples[0] : message.examples.find((e) => e.name === opts.example);
  if (!example) throw new UnknownEventError(`${opts.event} has no example ${opts.example}; it has ${message.examples.map((e) => e.name).join(', ')}`);
  const now = opts.now ?? Date.now();
  const bodyId = typeof example.payload.id === 'string' ? example.payload.id : null;
  // Order events carry their id in the body; the payout callback's body has none, its header alone names it.
  const id = opts.newId || bodyId === null ? newEventId(now) : bodyId;
  const payload = bodyId !== null ? JSON.stringify({ ...example.payload, id }) : JSON.stringify(example.payload);
  const record: EventRecord = {
    id,
    environmentId: 'mock',
    type: message.name as EventType,
    payload,
    orderId: null,
    merchantReference: null,
    transactionId: null,
    createdAt: now,
  };
  return { record, example: example.name };
}

/**
 * The delivery engine's own sender (server/delivery/sender.ts: 10-second deadline, redirects not
 * followed, only 2xx succeeds) under the development destination setting (WEBHOOK_ALLOW_INSECURE_URLS):
 * http, any port and loopback are allowed, so a receiver on the developer's machine can be reached.
 */
export function createMockSender(): Sender {
  return createSender({ policy: mockDestinationPolicy() });
}

export function mockDestinationPolicy(): DestinationPolicy {
  return createDestinationPolicy({ allowInsecure: true, nodeEnv: 'development' });
}

/** One signed attempt, as the delivery engine makes it (buildDeliveryRequest, then the sender). */
export async function postSigned(sender: Sender, to: string, record: EventRecord, secret: string, now: number): Promise<{ status: number | null; error?: string }> {
  const request = buildDeliveryRequest(record, secret, now);
  try {
    const outcome = await sender.send({ url: to, body: request.body, headers: request.headers });
    return outcome.statusCode !== null ? { status: outcome.statusCode } : { status: null, error: outcome.errorClass ?? 'network error' };
  } catch (err) {
    return { status: null, error: err instanceof Error ? err.message : String(err) };
  }
}

export async function sendMockEvent(sender: Sender, events: readonly MockEvent[], opts: SendOptions): Promise<SendResult> {
  const now = opts.now ?? Date.now();
  const { record, example } = mockEventRecord(events, { ...opts, now });
  const sent = await postSigned(sender, opts.to, record, opts.secret, now);
  return { event: opts.event, example, eventId: record.id, ...sent };
}
