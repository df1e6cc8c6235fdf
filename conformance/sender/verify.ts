// What each delivery the suite's receiver got must satisfy, derived from the AsyncAPI message
// it carries: its headers valid against the message's headers schema (Content-Type,
// Service-Event-Id, Service-Signature, User-Agent), Service-Event-Id equal to the body id, a
// signature that verifies with the secret over `<t>.<raw body>`, and a body valid against the
// message's payload schema.
import { createHmac } from 'node:crypto';
import type { MessageSpec } from '../core/asyncapi.ts';
import type { Exchange } from '../core/check.ts';
import { EVENT_ID_HEADER, SIGNATURE_HEADER } from '../../signing/signature.ts';
import { hmacHex, readSignature } from '../core/signature.ts';
import { Variator } from '../core/vary.ts';
import { header } from './receiver.ts';
import { STANDARD_HEADERS, hasStandardHeaders, standardSignatureProblems } from './standard.ts';
import type { Received } from './receiver.ts';

const variator = new Variator();

/** A delivery as evidence: what the implementation sent, and what the suite answered. */
export function asExchange(r: Received, label?: string): Exchange {
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(r.headers)) if (v !== undefined) headers[k] = Array.isArray(v) ? v.join(', ') : v;
  const text = r.body.toString('utf8');
  return {
    ...(label !== undefined ? { label } : {}),
    request: { method: r.method, url: r.url, headers, body: text.slice(0, 1024), bodyBytes: r.body.length, bodyTruncated: text.length > 1024 },
    response: {
      status: r.answered ?? null,
      headers: {},
      body: '',
      bodyTruncated: false,
      durationMs: 0,
      ...(r.answered === undefined ? { error: r.closedMono !== undefined ? 'held by the suite; the sender closed the connection' : 'held by the suite' } : {}),
    },
  };
}

export function parseBody(r: Received): unknown {
  try {
    return JSON.parse(r.body.toString('utf8'));
  } catch {
    return undefined;
  }
}

/** Problems with the headers of one delivery of `message` (empty when fine). */
export function headerProblems(r: Received, message: MessageSpec): string[] {
  const problems: string[] = [];
  const schema = message.headersSchema;
  const props = (schema.properties ?? {}) as Record<string, Record<string, unknown>>;
  // The schema names headers in their canonical case; HTTP names are case-insensitive.
  const values: Record<string, string> = {};
  for (const name of Object.keys(props)) {
    const v = header(r, name);
    if (v !== undefined) values[name] = v;
  }
  if (!variator.valid(schema, values)) problems.push(...variator.errors(schema, values).map((e) => `header ${e.replace(/^\//, '')}`));
  if (message.bodyCarriesEventId) {
    const body = parseBody(r) as { id?: unknown } | undefined;
    const id = eventIdOf(r);
    if (body && typeof body === 'object' && body.id !== id) problems.push(`${EVENT_ID_HEADER} ${JSON.stringify(id)} is not the body id ${JSON.stringify(body.id)}`);
  }
  return problems;
}

/** An endpoint's signatureScheme: which header sets each of its deliveries carries. */
export type Scheme = 'service-signature' | 'standard-webhooks' | 'both';
export const SCHEMES: readonly Scheme[] = ['service-signature', 'standard-webhooks', 'both'];
/** Another scheme than `s`, so a change is visible in the headers. */
export const switched = (s: Scheme): Scheme => (s === 'both' ? 'service-signature' : 'both');

/**
 * Problems with the signature of one delivery, verified with `secret` (empty when it verifies):
 * each header set it carries (Service-Signature; the Standard Webhooks headers of an endpoint
 * in `standard-webhooks` or `both`) judged on its own, and, with both, webhook-id equal to
 * Service-Event-Id. Which sets are required is `missingSets` (the endpoint's scheme).
 */
export function signatureProblems(r: Received, secret: string): string[] {
  const service = header(r, SIGNATURE_HEADER) !== undefined;
  const standard = hasStandardHeaders(r);
  if (!service && standard) return standardSignatureProblems(r, secret).map((p) => `Standard Webhooks set: ${p}`);
  if (!standard) return serviceSignatureProblems(r, secret);
  const sameId = header(r, 'webhook-id') === header(r, EVENT_ID_HEADER) ? [] : [`webhook-id ${JSON.stringify(header(r, 'webhook-id'))} is not Service-Event-Id ${JSON.stringify(header(r, EVENT_ID_HEADER))}: both sets name the one event`];
  return [
    ...serviceSignatureProblems(r, secret).map((p) => `Service-Signature set: ${p}`),
    ...standardSignatureProblems(r, secret).map((p) => `Standard Webhooks set: ${p}`),
    ...sameId,
  ];
}

/** The header sets `scheme` requires that `r` lacks (empty when it carries them all). */
export function missingSets(r: Received, scheme: Scheme): string[] {
  const missing: string[] = [];
  if (scheme !== 'standard-webhooks' && (header(r, SIGNATURE_HEADER) === undefined || header(r, EVENT_ID_HEADER) === undefined)) missing.push(`the Service-* set (${EVENT_ID_HEADER}, ${SIGNATURE_HEADER})`);
  const absent = STANDARD_HEADERS.filter((name) => header(r, name) === undefined);
  if (scheme !== 'service-signature' && absent.length > 0) missing.push(`the Standard Webhooks set (${absent.join(', ')} missing)`);
  return missing;
}

function serviceSignatureProblems(r: Received, secret: string): string[] {
  const value = header(r, SIGNATURE_HEADER);
  if (value === undefined) return [`no ${SIGNATURE_HEADER} header`];
  const read = readSignature(value);
  if ('malformed' in read) return [`${SIGNATURE_HEADER} is malformed: ${read.malformed}`];
  const parsed = { timestamp: read.t, signatures: read.v1 };
  const expected = hmacHex(secret, String(parsed.timestamp), r.body);
  if (parsed.signatures.includes(expected)) {
    const skew = Math.abs(r.receivedAt / 1000 - parsed.timestamp);
    return skew > 300 ? [`t=${parsed.timestamp} is ${Math.round(skew)} s away from the arrival time; a receiver rejects it (300 s)`] : [];
  }
  // Name the usual mistakes: a receiver's author sees at once what the sender did wrong.
  const hmac = (message: Buffer): string => createHmac('sha256', Buffer.from(secret, 'utf8')).update(message).digest('hex');
  const guesses: Array<[string, Buffer]> = [
    ['the raw body alone, without the `<t>.` prefix', r.body],
    ['`<t><raw body>` without the period', Buffer.concat([Buffer.from(String(parsed.timestamp)), r.body])],
    ['the body re-serialised', Buffer.from(`${parsed.timestamp}.${JSON.stringify(parseBody(r))}`)],
  ];
  const guess = guesses.find(([, m]) => parsed.signatures.includes(hmac(m)));
  return [
    `v1 is not HMAC-SHA256(secret, "<t>.<raw body>") for t=${parsed.timestamp}` + (guess ? `: it is the HMAC of ${guess[0]}` : ' (nor of any usual mistake: another secret?)'),
  ];
}

/** The timestamp of each header set `r` carries, by set: Service-Signature's t, webhook-timestamp. */
export function setTimestamps(r: Received): { service: number | null; standard: number | null } {
  const value = header(r, SIGNATURE_HEADER);
  const read = value === undefined ? null : readSignature(value);
  const t = header(r, 'webhook-timestamp');
  return { service: read === null || 'malformed' in read ? null : read.t, standard: t !== undefined && /^[0-9]{1,12}$/.test(t) ? Number(t) : null };
}

/** `t` of the signature, or null. */
export function signatureTimestamp(r: Received): number | null {
  const value = header(r, SIGNATURE_HEADER);
  if (value === undefined) {
    const t = header(r, 'webhook-timestamp');
    return t !== undefined && /^[0-9]{1,12}$/.test(t) ? Number(t) : null;
  }
  const read = readSignature(value);
  return 'malformed' in read ? null : read.t;
}

/** Problems with the body of one delivery of `message` (empty when valid against its payload schema). */
export function payloadProblems(r: Received, message: MessageSpec): string[] {
  const body = parseBody(r);
  if (body === undefined) return ['the body is not JSON'];
  return variator.valid(message.payloadSchema, body) ? [] : variator.errors(message.payloadSchema, body).map((e) => `body ${e}`);
}

export function eventIdOf(r: Received): string | undefined {
  return header(r, EVENT_ID_HEADER) ?? header(r, 'webhook-id');
}
