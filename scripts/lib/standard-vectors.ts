// The Standard Webhooks cases of the signature vectors (issue 40): the document's first order
// example sent by an endpoint in the `standard-webhooks` scheme, signed by the real signing code
// (signing/signature.ts standardSignature), then broken one rule at a time, plus rotation lists.
// They join generated/signature-vectors.json (payments-webhooks verifies them) and are published
// alone as generated/standard-webhooks-vectors.json for any Standard Webhooks library.
import { createHmac } from 'node:crypto';
import type { WebhookVerificationErrorCode } from '../../signing/errors.ts';
import { DEFAULT_TOLERANCE_SECONDS, standardSignature } from '../../signing/signature.ts';
import { WEBHOOK_ID_HEADER, WEBHOOK_SIGNATURE_HEADER, WEBHOOK_TIMESTAMP_HEADER } from '../../signing/standard.ts';
import type { SignatureVector } from '../../client/webhooks/vectors.ts';

export const STANDARD_VECTORS_FORMAT = 'standard-webhooks-vectors/1';

/** Documentation-only secrets: `whsec_` + the base64 of 33 ASCII bytes, letters and digits only (the form of new secrets). */
export const STANDARD_EXAMPLE_SECRET = `whsec_${Buffer.from('Docs_Standard_Webhooks_Secret_33b').toString('base64')}`;
const OTHER_SECRET = `whsec_${Buffer.from('Another_Standard_Webhooks_Secret!').toString('base64')}`;

const base64 = (text: string | Uint8Array): string => Buffer.from(typeof text === 'string' ? Buffer.from(text, 'utf8') : text).toString('base64');
/** HMAC-SHA256 with raw key bytes over a message: the mistakes standardSignature cannot make. */
const hmac = (key: Uint8Array | string, message: string): string => `v1,${createHmac('sha256', key).update(message, 'utf8').digest('base64')}`;

/** The request the cases start from: a signed example's timestamp, event id and body. */
export function buildStandardVectors(base: { timestamp: number; eventId: string; body: string }): SignatureVector[] {
  const secret = STANDARD_EXAMPLE_SECRET;
  const { timestamp: t, eventId: id, body } = base;
  const sig = standardSignature(secret, id, t, body);
  const headers = (signature: string | null, o: { id?: string | null; t?: string | null } = {}): Array<[string, string]> => {
    const out: Array<[string, string]> = [['Content-Type', 'application/json']];
    if (o.id !== null) out.push([WEBHOOK_ID_HEADER, o.id ?? id]);
    if (o.t !== null) out.push([WEBHOOK_TIMESTAMP_HEADER, o.t ?? String(t)]);
    if (signature !== null) out.push([WEBHOOK_SIGNATURE_HEADER, signature]);
    return out;
  };
  const ok = { eventId: id, timestamp: t, secretIndex: 0 };
  const make = (name: string, reason: string, o: Partial<SignatureVector>): SignatureVector => ({
    name: `standard-webhooks: ${name}`,
    reason,
    secrets: [secret],
    headers: headers(sig),
    body,
    bodyBase64: base64(body),
    now: t,
    toleranceSeconds: DEFAULT_TOLERANCE_SECONDS,
    valid: true,
    ...o,
  });
  const valid = (name: string, reason: string, o: Partial<SignatureVector> = {}, expected = ok): SignatureVector => make(name, reason, { ...o, valid: true, expected });
  const invalid = (name: string, error: WebhookVerificationErrorCode, reason: string, o: Partial<SignatureVector> = {}): SignatureVector =>
    make(name, reason, { ...o, valid: false, error });
  // One digit of the body changed after signing.
  const changed = body.replace(/[0-9]/, (d) => String((Number(d) + 1) % 10));
  const keyBytes = Buffer.from(secret.slice('whsec_'.length), 'base64');
  const otherId = 'f'.repeat(64);

  return [
    valid('valid', 'Signed with the whsec_ secret over "<webhook-id>.<webhook-timestamp>.<raw body>", keyed with the base64-decoded part after whsec_.'),
    valid('secret without the whsec_ prefix', 'The same secret given without its prefix: the key is the same decoded bytes.', { secrets: [secret.slice('whsec_'.length)] }),
    valid('tolerance: 300 s old', 'webhook-timestamp 300 s before the receiver clock is still within the window.', { now: t + DEFAULT_TOLERANCE_SECONDS }),
    valid('tolerance: 300 s in the future', 'The window applies both ways.', { now: t - DEFAULT_TOLERANCE_SECONDS }),
    invalid('tolerance: 301 s old', 'timestamp_out_of_tolerance', 'A timestamp 301 s old is outside the 5-minute window: a replay.', { now: t + DEFAULT_TOLERANCE_SECONDS + 1 }),
    invalid('tolerance: 301 s in the future', 'timestamp_out_of_tolerance', 'A timestamp 301 s ahead is refused too.', { now: t - DEFAULT_TOLERANCE_SECONDS - 1 }),
    valid('rotation list: the matching signature second', 'During a rotation the list carries one v1 per secret, space separated; any one matching is enough.', {
      headers: headers(`${standardSignature(OTHER_SECRET, id, t, body)} ${sig}`),
    }),
    valid('rotation: the receiver holds two secrets', 'The receiver passes [new, previous]; a request signed with the previous secret matches the second.', { secrets: [OTHER_SECRET, secret] }, { ...ok, secretIndex: 1 }),
    valid('other versions ignored', 'Entries of other versions (v1a, asymmetric) are skipped, not refused.', { headers: headers(`v1a,${base64('not an ed25519 signature')} ${sig}`) }),
    valid('header names in upper case', 'Header names are case-insensitive.', {
      headers: [['Webhook-Id', id], ['Webhook-Timestamp', String(t)], ['Webhook-Signature', sig]],
    }),
    invalid('tampered body', 'signature_mismatch', 'One character of the body changed after signing.', { body: changed, bodyBase64: base64(changed) }),
    invalid('re-serialised body', 'signature_mismatch', 'The same JSON pretty-printed: the signature covers the raw bytes.', {
      body: JSON.stringify(JSON.parse(body), null, 2),
      bodyBase64: base64(JSON.stringify(JSON.parse(body), null, 2)),
    }),
    invalid('wrong secret', 'signature_mismatch', "Signed with another endpoint's secret.", { headers: headers(standardSignature(OTHER_SECRET, id, t, body)) }),
    invalid('key not decoded', 'signature_mismatch', 'Signed with the whole secret string as UTF-8 (the Service-Signature key): the Standard Webhooks key is the base64-decoded part.', {
      headers: headers(hmac(Buffer.from(secret, 'utf8'), `${id}.${t}.${body}`)),
    }),
    invalid('signed without the id', 'signature_mismatch', 'v1 over "<timestamp>.<body>": the message starts with webhook-id.', { headers: headers(hmac(keyBytes, `${t}.${body}`)) }),
    invalid('webhook-id changed', 'signature_mismatch', 'A valid signature with another webhook-id: the id is signed.', { headers: headers(sig, { id: otherId }) }),
    invalid('webhook-timestamp changed', 'signature_mismatch', 'A valid signature with another timestamp: the timestamp is signed.', { headers: headers(sig, { t: String(t + 1) }) }),
    invalid('no webhook-signature', 'missing_signature', 'The header is absent.', { headers: headers(null) }),
    invalid('no webhook-timestamp', 'missing_signature', 'Without the timestamp nothing can be verified.', { headers: headers(sig, { t: null }) }),
    invalid('no webhook-id', 'missing_event_id', 'Without the id nothing can be verified (it is signed), nor deduplicated.', { headers: headers(sig, { id: null }) }),
    invalid('empty webhook-signature', 'malformed_signature', 'An empty list is malformed.', { headers: headers('') }),
    invalid('signature without its version', 'malformed_signature', 'Each entry is "<version>,<base64>".', { headers: headers(sig.slice('v1,'.length)) }),
    invalid('hex instead of base64', 'malformed_signature', 'v1 is the base64 of the 32-byte HMAC, not hex.', {
      headers: headers(`v1,${createHmac('sha256', keyBytes).update(`${id}.${t}.${body}`).digest('hex')}`),
    }),
    invalid('only other versions', 'malformed_signature', 'A list without any v1 entry cannot be verified.', { headers: headers(`v1a,${base64('not an ed25519 signature')}`) }),
    invalid('webhook-timestamp not in seconds', 'malformed_signature', 'webhook-timestamp is Unix seconds, 1 to 12 digits (not milliseconds or ISO 8601).', {
      headers: headers(sig, { t: new Date(t * 1000).toISOString() }),
    }),
    invalid('correctly signed, not JSON', 'invalid_json', 'The signature matches; the body does not parse (parsed only after verifying).', {
      body: 'not json',
      bodyBase64: base64('not json'),
      headers: headers(standardSignature(secret, id, t, 'not json')),
    }),
    invalid('webhook-id differs from the body id', 'event_id_mismatch', 'Signed correctly with another webhook-id: the id must equal the id of an order webhook body.', {
      headers: headers(standardSignature(secret, otherId, t, body), { id: otherId }),
    }),
  ];
}
