// The events the receiver target replays: the documented examples of every message, and
// seeded variations of them within the message's schema. Each comes with its exact body
// bytes (compact JSON, keys in the spec's order, as the service writes them) and its event id.
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import type { MessageSpec } from '../core/asyncapi.ts';
import { exampleHeader } from '../core/asyncapi.ts';
import { subSeed } from '../core/seed.ts';
import { Variator, patternArbitrary } from '../core/vary.ts';

export interface EventSample {
  message: MessageSpec;
  /** Where it comes from: `example "orderPaidExact"` or `variation 2 (of "orderPaidExact")`. */
  origin: string;
  payload: unknown;
  /** The exact bytes to sign and send. */
  body: Buffer;
  /** `Service-Event-Id`: the body's `id`, or (callback) an id of the headers schema's form. */
  eventId: string;
  /** Whether the payload is valid under the message's payload schema. */
  valid: boolean;
}

/** Fallbacks when a message's examples do not show these headers. */
const DEFAULT_CONTENT_TYPE = 'application/json';
const DEFAULT_USER_AGENT = 'PaymentsService-Webhooks/2.0';

export class EventFactory {
  readonly variator: Variator;
  readonly #seed: number;

  /** `variator` can be shared between factories (it caches compiled schemas). */
  constructor(seed: number, variator: Variator = new Variator()) {
    this.#seed = seed;
    this.variator = variator;
  }

  /** The documented examples of a message, as the service would send them. */
  examples(message: MessageSpec): EventSample[] {
    return message.examples.map((example) =>
      this.#sample(message, `example "${example.name}"`, example.payload, exampleHeader(example, 'Service-Event-Id')),
    );
  }

  /**
   * A variation of one of the message's examples (chosen by `label`), with field values
   * drawn within the schema. Reproducible: the same seed and label give the same event.
   */
  variation(message: MessageSpec, label: string): EventSample {
    const seed = subSeed(this.#seed, `${message.name}/${label}`);
    const examples = message.examples;
    if (examples.length === 0) throw new Error(`${message.pointer} has no example to vary`);
    const base = examples[seed % examples.length]!;
    const [payload] = this.variator.sample(message.payloadSchema, base.payload, seed, 1);
    const sample = this.#sample(message, `${label} (a variation of "${base.name}")`, payload, undefined, seed);
    if (sample.valid) return sample;
    // Never expected (every leaf is checked); keep the run going on the documented example.
    return { ...this.#sample(message, `${label} (the example "${base.name}"; its variation did not fit the schema)`, base.payload, undefined, seed) };
  }

  /** The `Content-Type` and `User-Agent` the service sends, as the message's examples show them. */
  staticHeaders(message: MessageSpec): { contentType: string; userAgent: string } {
    const first = message.examples[0];
    return {
      contentType: (first && exampleHeader(first, 'Content-Type')) ?? DEFAULT_CONTENT_TYPE,
      userAgent: (first && exampleHeader(first, 'User-Agent')) ?? DEFAULT_USER_AGENT,
    };
  }

  /** An event id of the headers schema's form, for a body without one (or a wrong id). */
  freshEventId(message: MessageSpec, label: string): string {
    const schema = (message.headersSchema.properties as Record<string, Record<string, unknown>> | undefined)?.['Service-Event-Id'];
    const seed = subSeed(this.#seed, `${message.name}/${label}/event-id`);
    if (schema && typeof schema.pattern === 'string') {
      const [id] = fc.sample(patternArbitrary(schema.pattern), { seed, numRuns: 1 });
      if (typeof id === 'string' && id !== '') return id;
    }
    return createHash('sha256').update(`${seed}`).digest('hex');
  }

  /** A secret that is not the receiver's: `whsec_` and 32 seeded bytes. */
  otherSecret(label: string): string {
    const [bytes] = fc.sample(fc.uint8Array({ minLength: 32, maxLength: 32 }), { seed: subSeed(this.#seed, `secret/${label}`), numRuns: 1 });
    return `whsec_${Buffer.from(bytes ?? new Uint8Array(32)).toString('base64url')}`;
  }

  /** A seeded choice, for example which message a verification check uses. */
  pick<T>(items: readonly T[], label: string): T {
    if (items.length === 0) throw new Error('nothing to pick from');
    return items[subSeed(this.#seed, `pick/${label}`) % items.length]!;
  }

  #sample(message: MessageSpec, origin: string, payload: unknown, documentedId: string | undefined, seed?: number): EventSample {
    const body = Buffer.from(JSON.stringify(payload), 'utf8');
    const bodyId = (payload as { id?: unknown } | null)?.id;
    let eventId: string;
    if (message.bodyCarriesEventId && typeof bodyId === 'string') eventId = bodyId;
    else if (documentedId !== undefined && seed === undefined) eventId = documentedId;
    else eventId = this.freshEventId(message, `${origin}/${seed ?? 0}`);
    return { message, origin, payload, body, eventId, valid: this.variator.valid(message.payloadSchema, payload) };
  }
}

/**
 * The body with one byte changed so that it is still valid JSON, still valid under the
 * payload schema and still carries the same id: only the signature can tell. Returns the
 * offset and the two characters, for the evidence.
 */
export function tamper(sample: EventSample, variator: Variator, seed: number): { body: Buffer; offset: number; from: string; to: string } {
  const text = sample.body.toString('latin1');
  const positions: number[] = [];
  for (let i = 0; i < text.length; i++) if (/[0-9A-Za-z]/.test(text[i]!)) positions.push(i);
  // Seeded order of the candidate positions.
  const order = fc.sample(fc.shuffledSubarray(positions, { minLength: positions.length, maxLength: positions.length }), { seed, numRuns: 1 })[0] ?? positions;
  for (const offset of order) {
    const from = text[offset]!;
    const to = nextOfSameClass(from);
    const body = Buffer.from(sample.body);
    body[offset] = to.charCodeAt(0);
    let parsed: unknown;
    try {
      parsed = JSON.parse(body.toString('utf8'));
    } catch {
      continue;
    }
    if (!variator.valid(sample.message.payloadSchema, parsed)) continue;
    if (sample.message.bodyCarriesEventId && (parsed as { id?: unknown }).id !== sample.eventId) continue;
    return { body, offset, from, to };
  }
  // No schema-preserving change exists: change the last byte before the closing brace.
  const body = Buffer.from(sample.body);
  const offset = Math.max(0, body.length - 2);
  const from = String.fromCharCode(body[offset] ?? 0x20);
  const to = from === ' ' ? '\t' : ' ';
  body[offset] = to.charCodeAt(0);
  return { body, offset, from, to };
}

function nextOfSameClass(c: string): string {
  if (c >= '0' && c <= '9') return c === '9' ? '0' : String.fromCharCode(c.charCodeAt(0) + 1);
  if (c >= 'a' && c <= 'z') return c === 'z' ? 'a' : String.fromCharCode(c.charCodeAt(0) + 1);
  if (c >= 'A' && c <= 'Z') return c === 'Z' ? 'A' : String.fromCharCode(c.charCodeAt(0) + 1);
  return c;
}
