// What the receiver checks share: the endpoints they send to, the malformed signature values,
// and the verdicts on an answer (accepted, or rejected before any handling).
import { createHmac } from 'node:crypto';
import { hmacHex } from '../core/signature.ts';
import type { CheckOutcome, Exchange, Failure, SpecRule } from '../core/check.ts';
import { is2xx } from '../core/http.ts';
import type { EventSample } from './events.ts';
import { DELIVERY_RULES, REJECT_WITH_NON_2XX } from './rules.ts';

export interface Endpoint {
  url: string;
  secret: string;
  previousSecret?: string;
}

/** Where each channel's messages go; a channel without an endpoint has its checks skipped. */
export type ChannelEndpoints = Record<string, Endpoint | { skip: string }>;

// ---- malformed Service-Signature values ----------------------------------------------

interface MalformedForm {
  slug: string;
  title: string;
  build(secret: string, t: number, body: Buffer): string;
}

export const MALFORMED_SIGNATURES: readonly MalformedForm[] = [
  { slug: 'no-t', title: 'no t= element', build: (s, t, b) => `v1=${hmacHex(s, String(t), b)}` },
  { slug: 'no-v1', title: 'no v1= element', build: (_s, t) => `t=${t}` },
  { slug: 'uppercase-v1', title: 'v1 in uppercase hex', build: (s, t, b) => `t=${t},v1=${hmacHex(s, String(t), b).toUpperCase()}` },
  { slug: 'short-v1', title: 'v1 of 63 hex characters', build: (s, t, b) => `t=${t},v1=${hmacHex(s, String(t), b).slice(0, 63)}` },
  { slug: 't-not-a-number', title: 't=NaN (signed over "NaN.<body>")', build: (s, _t, b) => `t=NaN,v1=${hmacHex(s, 'NaN', b)}` },
  { slug: 't-milliseconds', title: 't of 13 digits (milliseconds)', build: (s, t, b) => `t=${t}000,v1=${hmacHex(s, `${t}000`, b)}` },
  { slug: 'empty', title: 'an empty value', build: () => '' },
  { slug: 'other-scheme', title: 'another scheme (sha256=<hex>)', build: (s, _t, b) => `sha256=${createHmac('sha256', s).update(b).digest('hex')}` },
];

// ---- verdicts ---------------------------------------------------------------------------

export function answered(x: Exchange): string {
  const res = x.response;
  if (res.status === null) return `got no HTTP answer (${res.error ?? 'unknown error'})`;
  return `was answered ${res.status}`;
}

export function acceptedOrFailure(x: Exchange, sample: EventSample, what: string, rule: SpecRule): Failure | undefined {
  const res = x.response;
  if (is2xx(res)) return undefined;
  let message: string;
  if (res.status === null) {
    message =
      `${what} (${sample.message.name}, correctly signed) got no HTTP answer: ${res.error ?? 'unknown error'}. ` +
      'A network failure or a timeout counts as unsuccessful and the service retries it';
    rule = DELIVERY_RULES[1];
  } else if (res.status >= 300 && res.status < 400) {
    message = `${what} (${sample.message.name}, correctly signed) was answered ${res.status}: redirects are never followed, so the delivery is unsuccessful`;
    rule = DELIVERY_RULES[1];
  } else {
    message = `${what} (${sample.message.name}, correctly signed, Service-Event-Id ${sample.eventId}) was answered ${res.status}; only a 2xx accepts it, anything else is retried`;
  }
  return { message, rule, exchanges: [x] };
}

export function rejectedOutcome(x: Exchange, what: string, rule: SpecRule): CheckOutcome {
  const res = x.response;
  if (res.status === null) {
    return {
      status: 'failed',
      failure: {
        message: `${what} got no HTTP answer (${res.error ?? 'unknown error'}); reject it with a non-2xx status (400 is usual) before any handling`,
        rule: REJECT_WITH_NON_2XX,
        exchanges: [x],
      },
    };
  }
  if (is2xx(res)) {
    return {
      status: 'failed',
      failure: {
        message: `${what} was answered ${res.status}: the receiver accepted it. It must be rejected with a non-2xx status before any handling`,
        rule,
        exchanges: [x],
      },
    };
  }
  const notes: string[] = [];
  if (res.status >= 500) notes.push(`rejected with ${res.status}; a 4xx (400) says the request itself is wrong, a 5xx looks like an outage of the receiver`);
  return { status: 'passed', notes };
}

/** "a" or "an" before an event type (`an order.paid event`, `a webhook.test event`). */
export function article(word: string): string {
  return /^[aeiou]/i.test(word) ? 'an' : 'a';
}
