// The Standard Webhooks headers of a delivery (an endpoint whose signatureScheme is
// `standard-webhooks` or `both`, set with `sender --scheme`), checked with the suite's own reading
// of the standard (core/standard-signature.ts): webhook-id equal to the body id, a timestamp of
// 1-12 digits near the arrival, and a v1 entry of webhook-signature that is the HMAC of
// "<webhook-id>.<webhook-timestamp>.<raw body>" keyed with the base64-decoded secret.
import { standardEntry, standardKey } from '../core/standard-signature.ts';
import { header, type Received } from './receiver.ts';

export const STANDARD_HEADERS = ['webhook-id', 'webhook-timestamp', 'webhook-signature'] as const;

/** Whether the delivery carries any Standard Webhooks header. */
export function hasStandardHeaders(r: Received): boolean {
  return STANDARD_HEADERS.some((name) => header(r, name) !== undefined);
}

/** Problems with the Standard Webhooks signature of one delivery (empty when it verifies with `secret`). */
export function standardSignatureProblems(r: Received, secret: string): string[] {
  const [id, t, signature] = STANDARD_HEADERS.map((name) => header(r, name));
  const missing = STANDARD_HEADERS.filter((_, i) => [id, t, signature][i] === undefined);
  if (missing.length > 0) return [`no ${missing.join(', ')} header`];
  if (!/^[0-9]{1,12}$/.test(t!)) return [`webhook-timestamp ${JSON.stringify(t)} is not 1 to 12 digits (Unix seconds)`];
  const entries = signature!.split(' ');
  if (!entries.some((e) => e.startsWith('v1,'))) return ['webhook-signature has no v1 entry'];
  if (!entries.includes(standardEntry(standardKey(secret), id!, t!, r.body))) {
    return ['no v1 entry of webhook-signature is HMAC-SHA256(base64-decoded secret, "<webhook-id>.<webhook-timestamp>.<raw body>")'];
  }
  const skew = Math.abs(r.receivedAt / 1000 - Number(t));
  return skew > 300 ? [`webhook-timestamp ${t} is ${Math.round(skew)} s away from the arrival time; a receiver rejects it (300 s)`] : [];
}
