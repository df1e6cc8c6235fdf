// What `trigger` causes, with the merchant's own data: the event's example data from the
// generated AsyncAPI document, with `--data` merged over it and each `--set` applied, checked
// against the event's data schema from the same document (@cfworker/json-schema: small enough
// to bundle into the command). Only what the order request or the sandbox decides can change;
// the rest (the order id, its status, ...) is the service's, and asking to change it is an error.
import { Validator, type Schema } from '@cfworker/json-schema';
import webhooks from '../../generated/asyncapi/webhooks.bundled.json' with { type: 'json' };
import type { TriggerArgs, TriggerableEvent } from './args.ts';
import { UsageError } from './args.ts';

/** The data fields `trigger` can pass on: to the order request, or (reviewReason) to the sandbox review. */
const SETTABLE: Readonly<Record<TriggerableEvent, readonly string[]>> = {
  'order.created': ['merchantReference', 'amountMinor', 'assetId', 'networkId', 'amountBaseUnits'],
  'order.paid': ['merchantReference', 'amountMinor', 'assetId', 'networkId', 'amountBaseUnits'],
  'order.payment_review_required': ['merchantReference', 'amountMinor', 'assetId', 'networkId', 'amountBaseUnits', 'reviewReason'],
  'webhook.test': [],
};

type Data = Record<string, unknown>;
interface Message {
  payload: { $ref: string };
  examples?: Array<{ payload?: { type?: string; data?: Data } }>;
}

/** The event's example data, with the overrides applied and checked; throws a UsageError saying what is wrong. */
export function triggerData(args: Pick<TriggerArgs, 'event' | 'sets' | 'data'>): { data: Data; changed: string[] } {
  const { example, schema } = documentOf(args.event);
  const data: Data = structuredClone(example);
  const changed = new Set<string>();
  if (args.data !== null) {
    const merged = parseJson(args.data, '--data');
    if (typeof merged !== 'object' || merged === null || Array.isArray(merged)) throw new UsageError('--data must be a JSON object of the event\'s data fields');
    for (const [k, v] of Object.entries(merged)) setField(data, changed, k, v);
  }
  for (const { path, value } of args.sets) {
    const key = path.replace(/^data\./, '');
    setField(data, changed, key, valueOf(value, data[key]));
  }
  const refused = [...changed].filter((k) => !SETTABLE[args.event].includes(k));
  if (refused.length > 0) {
    const can = SETTABLE[args.event].length > 0 ? `; ${args.event} takes ${SETTABLE[args.event].join(', ')}` : `; ${args.event} takes none`;
    throw new UsageError(`${refused.map((k) => `data.${k}`).join(', ')} is set by the service, not by trigger${can}`);
  }
  const result = new Validator(schema, '2020-12', false).validate(data);
  if (!result.valid) {
    const errors = result.errors.filter((e) => e.keyword !== 'allOf' && e.keyword !== 'properties' && e.keyword !== '$ref');
    throw new UsageError(`the data does not match ${args.event}'s schema: ${(errors.length > 0 ? errors : result.errors).map((e) => `${e.instanceLocation.replace(/^#/, 'data')} ${e.error}`).join('; ')}`);
  }
  return { data, changed: [...changed] };
}

function setField(data: Data, changed: Set<string>, key: string, value: unknown): void {
  if (key === '' || key.includes('.')) throw new UsageError(`data.${key} is not a field of the event's data`);
  data[key] = value;
  changed.add(key);
}

/** A --set value: the text for a field whose example is text (amounts in base units are
 * decimal strings), else JSON when it reads as JSON (12.5, true), else the text itself. */
function valueOf(text: string, example: unknown): unknown {
  if (typeof example === 'string') return text;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function parseJson(text: string, name: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new UsageError(`${name} is not JSON: ${(err as Error).message}`);
  }
}

/** The event's first example data and its data schema (with the document's components, for its $refs). */
function documentOf(event: TriggerableEvent): { example: Data; schema: Schema } {
  const doc = webhooks as unknown as { components: { messages: Record<string, Message>; schemas: Record<string, Schema> } };
  for (const message of Object.values(doc.components.messages)) {
    const example = message.examples?.find((e) => e.payload?.type === event)?.payload?.data;
    if (!example) continue;
    const eventSchema = doc.components.schemas[message.payload.$ref.split('/').pop()!]!;
    const dataRef = (eventSchema.properties as Record<string, Schema>).data!.$ref as string;
    return { example, schema: { $ref: dataRef, components: doc.components } as unknown as Schema };
  }
  throw new Error(`no example of ${event} in the webhooks document`);
}
