// The signature test vectors the payments-webhooks package ships (generated/signature-vectors.json):
// every example of the AsyncAPI document, signed by the real signing code (signing/signature.ts)
// with the document's own example secret, then that request broken one rule at a time. Each case
// says what a verifier must answer and why, so a receiver in any language can be checked offline.
import { createHmac } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { parse as parseYaml } from 'yaml';
import { WEBHOOK_VERIFICATION_ERROR_CODES, type WebhookVerificationErrorCode } from '../../signing/errors.ts';
import { DEFAULT_TOLERANCE_SECONDS, EVENT_ID_HEADER, MIN_SECRET_BYTES, SIGNATURE_HEADER, computeSignature, signatureHeader } from '../../signing/signature.ts';
import type { SignatureVector, SignatureVectorFile } from '../../client/webhooks/vectors.ts';
import { ASYNCAPI_DOC } from './specs.ts';
import { STANDARD_EXAMPLE_SECRET, STANDARD_VECTORS_FORMAT, buildStandardVectors } from './standard-vectors.ts';

export const VECTORS_FORMAT = 'payments-webhooks-signature-vectors/1';

interface SpecExample {
  name: string;
  summary?: string;
  headers: Record<string, string>;
  payload: Record<string, unknown>;
}

interface SpecMessage {
  name: string;
  examples?: SpecExample[];
}

/** The documentation-only secret, as the document's description states it. */
export function exampleSecretOf(description: string): string {
  const match = /documentation-only secret\s+`(whsec_[A-Za-z0-9_-]+)`/.exec(description);
  if (!match?.[1]) throw new Error('webhooks.asyncapi.yaml: info.description names no documentation-only secret `whsec_…`');
  return match[1];
}

export interface SignedExample {
  message: string;
  example: string;
  summary: string;
  secret: string;
  timestamp: number;
  eventId: string;
  /** The compact JSON serialisation of the payload, key order as written: the signed bytes. */
  body: string;
  signature: string;
}

/**
 * Every example of the document, re-signed with the real signing code. Throws when an
 * example's own `Service-Signature` differs: the document would teach a wrong signature.
 */
export async function signedExamples(file: string = ASYNCAPI_DOC): Promise<SignedExample[]> {
  const raw = parseYaml(await readFile(file, 'utf8')) as { info: { description: string }; components: { messages: Record<string, SpecMessage> } };
  const secret = exampleSecretOf(raw.info.description);
  return Object.values(raw.components.messages).flatMap((message) =>
    (message.examples ?? []).map((example) => {
      const documented = example.headers[SIGNATURE_HEADER] ?? '';
      const timestamp = Number(/^t=([0-9]{1,12}),/.exec(documented)?.[1] ?? Number.NaN);
      const body = JSON.stringify(example.payload);
      const signature = signatureHeader(secret, timestamp, body);
      if (signature !== documented) {
        throw new Error(`webhooks.asyncapi.yaml: example ${example.name} of ${message.name} carries ${SIGNATURE_HEADER} ${documented}, the signing code makes ${signature}`);
      }
      const eventId = example.headers[EVENT_ID_HEADER] ?? '';
      return { message: message.name, example: example.name, summary: example.summary ?? '', secret, timestamp, eventId, body, signature };
    }),
  );
}

const base64 = (bytes: Uint8Array | string): string => Buffer.from(typeof bytes === 'string' ? Buffer.from(bytes, 'utf8') : bytes).toString('base64');
/** A second secret: another endpoint's, or the new one of a rotation. */
const OTHER_SECRET = `whsec_${Buffer.from('another-endpoint-secret-32-bytes').toString('base64url')}`;

export async function buildSignatureVectors(file: string = ASYNCAPI_DOC): Promise<SignatureVectorFile> {
  const examples = await signedExamples(file);
  const secret = examples[0]?.secret ?? '';
  const other = OTHER_SECRET;
  const vectors: SignatureVector[] = [];
  const sig = (headerSecret: string, t: number, body: string | Uint8Array): string => signatureHeader(headerSecret, t, body);

  for (const ex of examples) {
    vectors.push({
      name: `example ${ex.message} ${ex.example}`,
      reason: `The document's example "${ex.summary}", signed with the example secret over its compact JSON body: valid at t.`,
      secrets: [secret],
      headers: [['Content-Type', 'application/json'], [EVENT_ID_HEADER, ex.eventId], [SIGNATURE_HEADER, ex.signature]],
      body: ex.body,
      bodyBase64: base64(ex.body),
      now: ex.timestamp,
      toleranceSeconds: DEFAULT_TOLERANCE_SECONDS,
      valid: true,
      expected: { eventId: ex.eventId, timestamp: ex.timestamp, secretIndex: 0 },
    });
  }

  // The request the broken cases start from: the first order.payment_review_required example.
  const base = examples.find((e) => e.message === 'order.payment_review_required') ?? examples[0];
  if (!base) throw new Error('webhooks.asyncapi.yaml has no message examples');
  const { timestamp: t, eventId, body } = base;
  const ok = { eventId, timestamp: t, secretIndex: 0 };
  const request = ({ name, reason, ...overrides }: Partial<SignatureVector> & Pick<SignatureVector, 'name' | 'reason' | 'valid'>): SignatureVector => ({
    name,
    reason,
    secrets: [secret],
    headers: [['Content-Type', 'application/json'], [EVENT_ID_HEADER, eventId], [SIGNATURE_HEADER, base.signature]],
    body,
    bodyBase64: base64(body),
    now: t,
    toleranceSeconds: DEFAULT_TOLERANCE_SECONDS,
    ...overrides,
  });
  const withSignature = (value: string): Array<[string, string]> => [[EVENT_ID_HEADER, eventId], [SIGNATURE_HEADER, value]];
  const v1 = computeSignature(secret, t, body);
  const invalid = (name: string, error: WebhookVerificationErrorCode, reason: string, overrides: Partial<SignatureVector> = {}): SignatureVector =>
    request({ name, reason, valid: false, error, ...overrides });
  const valid = (name: string, reason: string, overrides: Partial<SignatureVector> = {}, expected = ok): SignatureVector =>
    request({ name, reason, valid: true, expected, ...overrides });

  vectors.push(
    valid('tolerance: 300 s old', `|now - t| = ${DEFAULT_TOLERANCE_SECONDS} is still within the tolerance.`, { now: t + DEFAULT_TOLERANCE_SECONDS }),
    valid('tolerance: 300 s in the future', 'The tolerance applies both ways: a receiver clock 300 s behind still accepts.', { now: t - DEFAULT_TOLERANCE_SECONDS }),
    invalid('tolerance: 301 s old', 'timestamp_out_of_tolerance', '|now - t| = 301 exceeds 300 seconds: a replayed or very late request.', { now: t + DEFAULT_TOLERANCE_SECONDS + 1 }),
    invalid('tolerance: 301 s in the future', 'timestamp_out_of_tolerance', 'A t more than 300 seconds ahead of the receiver clock is refused too.', { now: t - DEFAULT_TOLERANCE_SECONDS - 1 }),
    valid('rotation: signed with the previous secret', 'During a rotation the receiver passes [new, previous]; a request signed with the previous secret matches the second one.', { secrets: [other, secret] }, { ...ok, secretIndex: 1 }),
    valid('several v1 values, one matching', 'Any v1 may match; the others (here from another secret) are ignored.', { headers: withSignature(`t=${t},v1=${computeSignature(other, t, body)},v1=${v1}`) }),
    valid('unknown scheme ignored', 'Elements of other schemes (v0=...) are ignored, so a sender can add one later.', { headers: withSignature(`t=${t},v0=legacy,v1=${v1}`) }),
    valid('elements in another order', 'v1 before t is the same header.', { headers: withSignature(`v1=${v1},t=${t}`) }),
    valid('optional whitespace around the value', 'Leading and trailing spaces or tabs of the header value are HTTP optional whitespace, removed before parsing.', { headers: withSignature(` \tt=${t},v1=${v1} `) }),
    valid('header names in lower case', 'Header names are case-insensitive.', { headers: [['service-event-id', eventId], ['service-signature', base.signature]] }),
    invalid('tampered body', 'signature_mismatch', 'One character of the body changed after signing (amountMinor 4999 -> 4998).', {
      body: body.replace('"amountMinor":4999', '"amountMinor":4998'),
      bodyBase64: base64(body.replace('"amountMinor":4999', '"amountMinor":4998')),
    }),
    invalid('re-serialised body', 'signature_mismatch', 'The same JSON pretty-printed: the signature covers the exact raw bytes, so verify before parsing or re-serialising.', {
      body: JSON.stringify(JSON.parse(body), null, 2),
      bodyBase64: base64(JSON.stringify(JSON.parse(body), null, 2)),
    }),
    invalid('wrong secret', 'signature_mismatch', "Signed with another endpoint's secret.", { headers: withSignature(sig(other, t, body)) }),
    invalid('key without the whsec_ prefix', 'signature_mismatch', 'Signed with the secret minus its whsec_ prefix: the HMAC key is the whole string, prefix included, as UTF-8 bytes.', {
      headers: withSignature(`t=${t},v1=${computeSignature(secret.slice('whsec_'.length), t, body)}`),
    }),
    invalid('key base64-decoded', 'signature_mismatch', 'Signed with the base64url-decoded secret: the key is the secret string itself, never decoded.', {
      headers: withSignature(`t=${t},v1=${hmacWithKeyBytes(Buffer.from(secret.slice('whsec_'.length), 'base64url'), t, body)}`),
    }),
    invalid('body signed without the timestamp', 'signature_mismatch', 'v1 computed over the body alone: the message is "<t>." followed by the body.', {
      headers: withSignature(`t=${t},v1=${hmacWithKeyBytes(Buffer.from(secret, 'utf8'), null, body)}`),
    }),
    invalid('timestamp changed', 'signature_mismatch', 'A valid v1 with another t: t is part of the signed message, so it cannot be refreshed by an attacker.', { headers: withSignature(`t=${t + 1},v1=${v1}`) }),
    invalid('no Service-Signature', 'missing_signature', 'The header is absent.', { headers: [[EVENT_ID_HEADER, eventId]] }),
    invalid('empty Service-Signature', 'malformed_signature', 'An empty value is malformed, not missing.', { headers: withSignature('') }),
    invalid('upper-case hex', 'malformed_signature', 'v1 must be 64 lower-case hex characters.', { headers: withSignature(`t=${t},v1=${v1.toUpperCase()}`) }),
    invalid('short v1', 'malformed_signature', 'v1 of 63 characters.', { headers: withSignature(`t=${t},v1=${v1.slice(1)}`) }),
    invalid('no t', 'malformed_signature', 'Exactly one t is required.', { headers: withSignature(`v1=${v1}`) }),
    invalid('two t', 'malformed_signature', 'A second t is refused, even with the same value.', { headers: withSignature(`t=${t},t=${t},v1=${v1}`) }),
    invalid('no v1', 'malformed_signature', 'At least one v1 is required.', { headers: withSignature(`t=${t}`) }),
    invalid('t of 13 digits', 'malformed_signature', 't is 1 to 12 decimal digits, even when leading zeros keep its value (the v1 matches that value).', { headers: withSignature(`t=${String(t).padStart(13, '0')},v1=${v1}`) }),
    invalid('space after the comma', 'malformed_signature', 'No whitespace inside the value: ", v1=" is not an element.', { headers: withSignature(`t=${t}, v1=${v1}`) }),
    invalid('trailing comma', 'malformed_signature', 'Empty elements are refused.', { headers: withSignature(`t=${t},v1=${v1},`) }),
    invalid('two Service-Signature headers', 'malformed_signature', 'Exactly one Service-Signature header is required.', {
      headers: [[EVENT_ID_HEADER, eventId], [SIGNATURE_HEADER, base.signature], [SIGNATURE_HEADER, base.signature]],
    }),
    invalid('correctly signed, not JSON', 'invalid_json', 'The signature matches, then the body does not parse: the body is parsed only after the signature is checked.', {
      body: 'not json',
      bodyBase64: base64('not json'),
      headers: withSignature(sig(secret, t, 'not json')),
    }),
    withoutText(
      invalid('correctly signed, not UTF-8', 'invalid_json', 'The signed bytes are not valid UTF-8 (0xff): verify the raw bytes, then refuse to decode them.', {
        bodyBase64: base64(NOT_UTF8),
        headers: withSignature(sig(secret, t, NOT_UTF8)),
      }),
    ),
    invalid('no Service-Event-Id', 'missing_event_id', 'Signed correctly, but the event id header is absent.', { headers: [[SIGNATURE_HEADER, base.signature]] }),
    invalid('empty Service-Event-Id', 'missing_event_id', 'An empty event id counts as missing.', { headers: [[EVENT_ID_HEADER, ''], [SIGNATURE_HEADER, base.signature]] }),
    invalid('Service-Event-Id differs from the body id', 'event_id_mismatch', 'The header must equal the id in the body of an order webhook.', {
      headers: [[EVENT_ID_HEADER, 'f'.repeat(64)], [SIGNATURE_HEADER, base.signature]],
    }),
    invalid('two Service-Event-Id headers', 'event_id_mismatch', 'Exactly one Service-Event-Id header is required.', {
      headers: [[EVENT_ID_HEADER, eventId], [EVENT_ID_HEADER, eventId], [SIGNATURE_HEADER, base.signature]],
    }),
    invalid('no secrets', 'no_secrets', 'Nothing to verify with: a configuration error of the receiver.', { secrets: [] }),
    invalid('secret too short', 'secret_too_short', `A secret of fewer than ${MIN_SECRET_BYTES} UTF-8 bytes is refused before anything else.`, { secrets: ['whsec_too-short'] }),
  );
  const codes = new Set(vectors.flatMap((v) => (v.error ? [v.error] : [])));
  const untested = WEBHOOK_VERIFICATION_ERROR_CODES.filter((code) => !codes.has(code));
  if (untested.length > 0) throw new Error(`signature vectors: no case for ${untested.join(', ')}`);
  return {
    format: VECTORS_FORMAT,
    description:
      'Signature test vectors of the payments service webhooks (Service-Signature: t=<Unix seconds>,v1=<hex HMAC-SHA256 of "<t>." + raw body, keyed with the whole secret string as UTF-8>; ' +
      'the Standard Webhooks cases are in standard-webhooks-vectors.json). ' +
      'For each vector, give your verifier the raw body (bodyBase64 decoded), the headers, the secrets and the clock (now, Unix seconds) and tolerance: ' +
      'a valid vector must be accepted with the expected event id, t and index of the matching secret; an invalid one must be refused, with the given error code if your verifier names its errors.',
    exampleSecret: secret,
    toleranceSeconds: DEFAULT_TOLERANCE_SECONDS,
    minSecretBytes: MIN_SECRET_BYTES,
    vectors,
  };
}

/** `{"id":"<0xff>"}`: JSON-looking bytes that are not UTF-8. */
const NOT_UTF8 = Uint8Array.from([0x7b, 0x22, 0x69, 0x64, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d]);

/** A case whose body exists only as bytes. */
function withoutText(vector: SignatureVector): SignatureVector {
  const { body, ...rest } = vector;
  void body;
  return rest;
}

/**
 * HMAC-SHA256 with raw key bytes over "<t>." + body, or the body alone: the key and message
 * mistakes a verifier must not accept, which computeSignature (taking the secret string) cannot make.
 */
function hmacWithKeyBytes(key: Uint8Array, t: number | null, body: string): string {
  return createHmac('sha256', key).update(t === null ? body : `${t}.${body}`, 'utf8').digest('hex');
}

/**
 * generated/standard-webhooks-vectors.json: the Standard Webhooks cases, for any library of the
 * standard (standard-webhooks #10 asks for shared vectors). Compact, to keep payments-webhooks
 * under its 1 MB installed goal: the UTF-8 body once at the top, a case's own `body` only where
 * it differs. Verify each with `secrets[i]` in turn; `error` names the broken rule.
 */
export async function buildStandardVectorFile(file: string = ASYNCAPI_DOC): Promise<StandardVectorFile> {
  const examples = await signedExamples(file);
  const base = examples.find((e) => e.message === 'order.created' && e.body.length === Math.min(...examples.map((x) => x.body.length))) ?? examples[0];
  if (!base) throw new Error('webhooks.asyncapi.yaml has no message examples');
  return {
    format: STANDARD_VECTORS_FORMAT,
    description:
      'Standard Webhooks v1.0.0 test vectors: webhook-id, webhook-timestamp (Unix seconds) and webhook-signature ' +
      '(space-separated "v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<raw body>">", keyed with the base64-decoded part of the secret after whsec_). ' +
      'For each vector give your verifier its body (the top-level body unless it has its own, as UTF-8 bytes), its headers, a secret from its secrets and the clock (now, Unix seconds): ' +
      'a valid vector verifies with secrets[expected.secretIndex], an invalid one with none. error names the broken rule.',
    secret: STANDARD_EXAMPLE_SECRET,
    toleranceSeconds: DEFAULT_TOLERANCE_SECONDS,
    body: base.body,
    vectors: buildStandardVectors(base).map(({ name, reason, secrets, headers, body, now, valid, expected, error }) => ({
      name,
      reason,
      secrets,
      headers,
      ...(body !== base.body ? { body } : {}),
      now,
      valid,
      ...(expected ? { expected } : {}),
      ...(error ? { error } : {}),
    })),
  };
}

/** The compact file of the Standard Webhooks cases. */
export interface StandardVectorFile {
  format: string;
  description: string;
  secret: string;
  toleranceSeconds: number;
  /** The body of every case that has none of its own. */
  body: string;
  vectors: Array<Pick<SignatureVector, 'name' | 'reason' | 'secrets' | 'headers' | 'body' | 'now' | 'valid' | 'expected' | 'error'>>;
}
