// The suite's own reading of Standard Webhooks v1.0.0 (standard-webhooks/standard-webhooks,
// spec/standard-webhooks.md), written apart from signing/ so an error there cannot pass the
// suite's checks too:
//   webhook-signature: v1,<base64(HMAC-SHA256(key, "<webhook-id>.<webhook-timestamp>.<raw body>"))> [...]
//   key = base64-decode(the secret without its optional whsec_ prefix)
import { createHmac } from 'node:crypto';

const PREFIX = 'whsec_';

/** The HMAC key of a secret given with or without `whsec_`. */
export function standardKey(secret: string): Buffer {
  return Buffer.from(secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret, 'base64');
}

/** One `v1,<base64>` entry signed with raw key bytes over `<id>.<t>.<body>` (any `t` text). */
export function standardEntry(key: Buffer, id: string, rawT: string, body: Buffer): string {
  return `v1,${createHmac('sha256', key).update(`${id}.${rawT}.`, 'utf8').update(body).digest('base64')}`;
}

/** Whether a secret is Standard Webhooks material: base64 (standard alphabet) after an optional whsec_. */
export function isStandardSecret(secret: string): boolean {
  const text = secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret;
  return /^[A-Za-z0-9+/]+={0,2}$/.test(text) && standardKey(secret).length > 0;
}
