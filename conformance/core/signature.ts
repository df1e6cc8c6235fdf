// The suite's own reading of the Service-Signature scheme (AsyncAPI document, "Signature"):
//   Service-Signature: t=<Unix seconds, 1-12 digits>,v1=<64 lowercase hex>[,v1=...][,<scheme>=<value>]
//   v1 = hex(HMAC-SHA256(key = UTF-8 bytes of the whole secret, message = "<t>." + raw body bytes))
// Written for the suite, apart from signing/ (what the reference server and the merchant
// helpers sign and verify with), so an error there cannot pass the suite's checks too.
import { createHmac } from 'node:crypto';

/** HMAC over `<raw t>.<body>` for any `t` text (malformed forms sign over what they carry). */
export function hmacHex(secret: string, rawT: string, body: Buffer): string {
  return createHmac('sha256', Buffer.from(secret, 'utf8')).update(`${rawT}.`, 'utf8').update(body).digest('hex');
}

/** A well-formed header value for `body` sent at `t`. */
export function signedHeader(secret: string, t: number, body: Buffer): string {
  return `t=${t},v1=${hmacHex(secret, String(t), body)}`;
}

/** `t` and every `v1` of a header value, or what makes it malformed. */
export function readSignature(value: string): { t: number; v1: string[] } | { malformed: string } {
  let t: number | undefined;
  const v1: string[] = [];
  const elements = value.replace(/^[ \t]+|[ \t]+$/g, '').split(',');
  for (const [i, element] of elements.entries()) {
    const m = /^([a-z][a-z0-9]*)=(.*)$/.exec(element);
    if (!m) return { malformed: `element ${i + 1} (${JSON.stringify(element)}) is not scheme=value` };
    const [, key, item = ''] = m;
    if (key === 't') {
      if (t !== undefined) return { malformed: 'more than one t= element' };
      if (!/^[0-9]{1,12}$/.test(item)) return { malformed: 't= is not 1 to 12 decimal digits (Unix seconds)' };
      t = Number(item);
    } else if (key === 'v1') {
      if (!/^[0-9a-f]{64}$/.test(item)) return { malformed: 'v1= is not 64 lowercase hexadecimal characters' };
      v1.push(item);
    } else if (!/^[\x21-\x7e]+$/.test(item)) {
      return { malformed: `the ${key}= element has an empty or non-visible-ASCII value` };
    }
  }
  if (t === undefined) return { malformed: 'no t= element' };
  if (v1.length === 0) return { malformed: 'no v1= signature' };
  return { t, v1 };
}
