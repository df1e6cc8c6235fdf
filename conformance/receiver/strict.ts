// Round four of the receiver checks: inputs the service never sends but an attacker or a later
// version can. The Service-Signature header read to the letter (a key twice, a t that is not
// 1 to 12 ASCII digits), the signature checked before the duplicate check, the previous
// secret held to the same timestamp window, and forward-compatible payloads (an unknown field,
// an unknown reviewReason) accepted. Each check names its rule.
import type { ChannelSpec, MessageSpec } from '../core/asyncapi.ts';
import { defineCheck } from '../core/define.ts';
import type { Check, CheckOutcome, Exchange } from '../core/check.ts';
import { exchange, is2xx } from '../core/http.ts';
import { hmacHex } from '../core/signature.ts';
import { EVENT_ID_HEADER, SIGNATURE_HEADER } from '../../signing/signature.ts';
import { judgedAhead } from './ahead.ts';
import { EventFactory } from './events.ts';
import type { EventSample } from './events.ts';
import { DELIVERY_RULES, FORWARD_COMPATIBILITY, RECEIVER, REJECT_BEFORE_HANDLING, REJECT_WITH_NON_2XX, UNKNOWN_REVIEW_REASON, VERIFICATION_RULES } from './rules.ts';
import type { ReceiverRule } from './rules.ts';
import { acceptedOrFailure, answered, article, rejectedOutcome } from './verdicts.ts';
import type { ChannelEndpoints, Endpoint } from './verdicts.ts';

const OUTSIDE_TOLERANCE = 301;
/** The message whose reviewReason may gain values (AsyncAPI, Versioning rule 2). */
const REVIEW_MESSAGE = 'order.payment_review_required';

export interface StrictChecksOptions {
  channels: ChannelSpec[];
  endpoints: ChannelEndpoints;
  seed: number;
  timeoutMs: number;
  now?: () => number;
}

/** A `t` that is not "1 to 12 digits", written so a lenient number parser still reads now. */
interface TimestampForm {
  slug: string;
  title: string;
  write(t: number): string;
}

export const LOOSE_TIMESTAMPS: readonly TimestampForm[] = [
  { slug: 'leading-zeros', title: 'now with leading zeros, 13 digits', write: (t) => String(t).padStart(13, '0') },
  { slug: 'plus-sign', title: 'now with a plus sign', write: (t) => `+${t}` },
  { slug: 'fraction', title: 'now with a decimal fraction (".0")', write: (t) => `${t}.0` },
  { slug: 'exponent', title: 'now in exponent notation ("e0")', write: (t) => `${t}e0` },
  { slug: 'hex', title: 'now in hexadecimal ("0x…")', write: (t) => `0x${t.toString(16)}` },
  { slug: 'space', title: 'now after a space', write: (t) => ` ${t}` },
  { slug: 'trailing-letters', title: 'now followed by letters', write: (t) => `${t}s` },
];

/** Keys added by the forward-compatibility check: names no version of the contract uses. */
const FUTURE_FIELD = 'conformanceFutureField';
const FUTURE_REASON = 'conformance_future_reason';

export function strictChecks(opts: StrictChecksOptions): Check[] {
  const factory = new EventFactory(opts.seed);
  const now = opts.now ?? Date.now;
  const nowSeconds = (): number => Math.floor(now() / 1000);
  const checks: Check[] = [];

  for (const channel of opts.channels) {
    if (channel.messages.length === 0) continue;
    const group = `verification (${channel.id})`;
    const endpointOf = (): Endpoint | string => {
      const e = opts.endpoints[channel.id];
      if (!e) return `no endpoint was given for the ${channel.id} channel`;
      return 'skip' in e ? e.skip : e;
    };
    /** POSTs `body` with the service's headers and the Service-Signature value given. */
    const post = (e: Endpoint, s: EventSample, signature: string, signal: AbortSignal, label: string, body = s.body): Promise<Exchange> => {
      const { contentType, userAgent } = factory.staticHeaders(s.message);
      return exchange({
        method: 'POST',
        url: e.url,
        headers: { 'Content-Type': contentType, [EVENT_ID_HEADER]: s.eventId, [SIGNATURE_HEADER]: signature, 'User-Agent': userAgent },
        body,
        timeoutMs: opts.timeoutMs,
        signal,
        label,
      });
    };
    /** A check of this channel: skipped without an endpoint; `run` gets a fresh event of a seeded message. */
    const add = (slug: string, title: string, rules: ReceiverRule[], run: (e: Endpoint, s: EventSample, signal: AbortSignal) => Promise<CheckOutcome>, messages: MessageSpec[] = channel.messages): void => {
      if (messages.length === 0) return;
      const sample = factory.variation(factory.pick(messages, `${channel.id}/${slug}`), `${channel.id}/${slug}`);
      checks.push(defineCheck({
        book: RECEIVER,
        id: `${slug.startsWith('accepts.') ? '' : `verification.${channel.id}.`}${slug}`,
        title,
        group: slug.startsWith('accepts.') ? sample.message.name : group,
        rules,
        run: async (ctx) => {
          const endpoint = endpointOf();
          if (typeof endpoint === 'string') return { status: 'skipped', reason: endpoint };
          return run(endpoint, sample, ctx.signal);
        },
      }));
    };
    /** Every request must be rejected; the first accepted one fails the check. */
    const allRejected = async (requests: Array<() => Promise<Exchange>>, what: (i: number) => string, rule: ReceiverRule): Promise<CheckOutcome> => {
      const notes: string[] = [];
      for (const [i, send] of requests.entries()) {
        const outcome = rejectedOutcome(await send(), what(i), rule);
        if (outcome.status === 'failed') return outcome;
        if (outcome.status === 'passed') notes.push(...(outcome.notes ?? []));
      }
      return { status: 'passed', notes: [...new Set(notes)] };
    };
    const rejectRules = (...rules: ReceiverRule[]): ReceiverRule[] => [...rules, REJECT_WITH_NON_2XX, REJECT_BEFORE_HANDLING];
    const desc = (s: EventSample): string => `${article(s.message.name)} ${s.message.name} event`;

    // ---- rule 1: one t, of 1 to 12 ASCII digits --------------------------------------------
    add('header.t-twice', 'Rejects a Service-Signature with two t= elements (each the current time, v1 correct)', rejectRules(VERIFICATION_RULES[1]), (e, s, signal) => {
      const t = nowSeconds();
      const v1 = hmacHex(e.secret, String(t), s.body);
      const values = [`t=${t},t=${t},v1=${v1}`, `t=${t},v1=${v1},t=${t}`];
      return allRejected(
        values.map((v, i) => () => post(e, s, v, signal, `t twice (${i + 1})`)),
        (i) => `${desc(s)} whose Service-Signature is "${values[i]!.replace(v1, '<correct v1>')}": the form is t=<Unix seconds>,v1=<hex HMAC>, one t (a parser that keeps the first or the last t accepts it)`,
        VERIFICATION_RULES[1],
      );
    });
    for (const form of LOOSE_TIMESTAMPS) {
      add(`header.t-${form.slug}`, `Rejects a t that is not 1 to 12 digits: ${form.title}`, rejectRules(VERIFICATION_RULES[1]), (e, s, signal) => {
        const t = nowSeconds();
        const raw = form.write(t);
        // Signed over the t as written, and over the number it stands for: a receiver that
        // reads t leniently accepts one or the other.
        const signatures = [`t=${raw},v1=${hmacHex(e.secret, raw, s.body)}`, `t=${raw},v1=${hmacHex(e.secret, String(t), s.body)}`];
        return allRejected(
          signatures.map((v, i) => () => post(e, s, v, signal, i === 0 ? 'v1 over the t as written' : 'v1 over the t as a number')),
          (i) => `${desc(s)} whose t is ${JSON.stringify(raw)} (${form.title}), v1 computed over ${i === 0 ? `"${raw}.<body>"` : `"${t}.<body>"`}: t must be 1 to 12 decimal digits`,
          VERIFICATION_RULES[1],
        );
      });
    }

    // ---- rule 3 and the Errors row: the signature before the duplicate check -----------------
    add('signature-before-duplicates', 'Checks the signature before the duplicate check: a forged request reusing an event id is refused before and after the genuine one, which is accepted', [VERIFICATION_RULES[3], REJECT_BEFORE_HANDLING, DELIVERY_RULES[3], REJECT_WITH_NON_2XX], async (e, s, signal) => {
      const forger = factory.otherSecret(`${channel.id}/forged`);
      const forged = (label: string): Promise<Exchange> => {
        const t = nowSeconds();
        return post(e, s, `t=${t},v1=${hmacHex(forger, String(t), s.body)}`, signal, label);
      };
      const first = await forged('forged, before the genuine event');
      const before = rejectedOutcome(first, `${desc(s)} (Service-Event-Id ${s.eventId}, never delivered before) signed with a secret that is not the endpoint's`, VERIFICATION_RULES[3]);
      if (before.status === 'failed') return before;
      const t = nowSeconds();
      const genuine = await post(e, s, `t=${t},v1=${hmacHex(e.secret, String(t), s.body)}`, signal, 'the genuine event, same id');
      if (!is2xx(genuine.response)) {
        return {
          status: 'failed',
          failure: {
            message:
              `after a forged request with Service-Event-Id ${s.eventId} was refused, the genuine, correctly signed event with that id ${answered(genuine)}: ` +
              'the receiver recorded the id of a request it had not verified, so a forger can block any event by sending its id first',
            rule: VERIFICATION_RULES[3],
            exchanges: [first, genuine],
          },
        };
      }
      const after = await forged('forged again, after the genuine event');
      const verdict = rejectedOutcome(after, `${desc(s)} signed with a secret that is not the endpoint's, reusing the id of an event already accepted (a receiver that answers duplicates before verifying accepts it)`, VERIFICATION_RULES[3]);
      return verdict.status === 'failed' && verdict.failure ? { ...verdict, failure: { ...verdict.failure, exchanges: [first, genuine, after] } } : verdict;
    });

    // ---- rule 8 with rule 4: the previous secret gets the same window ------------------------
    add('rotation.previous-secret-window', `Rejects a signature made with the previous secret whose t is ${OUTSIDE_TOLERANCE} s away`, rejectRules(VERIFICATION_RULES[8], VERIFICATION_RULES[4]), (e, s, signal) => {
      const previous = e.previousSecret;
      if (previous === undefined) return Promise.resolve({ status: 'skipped', reason: `no previous secret was given for ${channel.id}` });
      const offsets = [-OUTSIDE_TOLERANCE, OUTSIDE_TOLERANCE];
      const signedAt = (o: number) => (ms: number) => {
        const t = Math.floor(ms / 1000) + o;
        return post(e, s, `t=${t},v1=${hmacHex(previous, String(t), s.body)}`, signal, `previous secret, t ${o} s`);
      };
      return allRejected(
        offsets.map((o) => () => (o > 0 ? judgedAhead(signedAt(o), now) : signedAt(o)(now()))),
        (i) => `${desc(s)} signed with the previous secret, t ${OUTSIDE_TOLERANCE} seconds ${offsets[i]! < 0 ? 'in the past' : 'in the future'} (the previous secret is accepted for requests in flight, under the same 300 s window)`,
        VERIFICATION_RULES[4],
      );
    });

    // ---- Versioning rule 2: forward compatibility -------------------------------------------
    const accept = async (e: Endpoint, s: EventSample, payload: unknown, what: string, rule: ReceiverRule, signal: AbortSignal): Promise<CheckOutcome> => {
      const body = Buffer.from(JSON.stringify(payload), 'utf8');
      const t = nowSeconds();
      const x = await post(e, s, `t=${t},v1=${hmacHex(e.secret, String(t), body)}`, signal, what, body);
      const failure = acceptedOrFailure(x, { ...s, payload, body }, what, rule);
      return failure ? { status: 'failed', failure: failure.rule === DELIVERY_RULES[1] ? failure : { ...failure, rule } } : { status: 'passed' };
    };
    for (const message of channel.messages) {
      add(`accepts.${message.name}.unknown-field`, `Accepts ${article(message.name)} ${message.name} event carrying fields it does not know (forward compatibility)`, [FORWARD_COMPATIBILITY, VERIFICATION_RULES[2]], (e, s, signal) => {
        const payload = withFutureFields(s.payload);
        return accept(e, s, payload, `${desc(s)} with an unknown field "${FUTURE_FIELD}" at the top level and in data, correctly signed (an event may gain optional fields within v2; ignore them)`, FORWARD_COMPATIBILITY, signal);
      }, [message]);
    }
    const review = channel.messages.filter((m) => m.name === REVIEW_MESSAGE);
    add(`accepts.${REVIEW_MESSAGE}.unknown-review-reason`, `Accepts ${REVIEW_MESSAGE} with a reviewReason it does not know (treated as a review)`, [UNKNOWN_REVIEW_REASON, FORWARD_COMPATIBILITY], (e, s, signal) => {
      const payload = structuredClone(s.payload) as { data?: Record<string, unknown> };
      payload.data = { ...(payload.data ?? {}), reviewReason: FUTURE_REASON };
      return accept(e, s, payload, `${desc(s)} with reviewReason "${FUTURE_REASON}", a value the receiver does not know, correctly signed`, UNKNOWN_REVIEW_REASON, signal);
    }, review);
  }
  return checks;
}

/** The payload with an unknown field at the top level and, when there is one, in `data`. */
function withFutureFields(payload: unknown): unknown {
  const copy = structuredClone(payload) as Record<string, unknown>;
  const future = { addedIn: 'a later v2 release', values: [1, 'two'] };
  const data = copy.data;
  if (data !== null && typeof data === 'object' && !Array.isArray(data)) copy.data = { ...(data as Record<string, unknown>), [FUTURE_FIELD]: future };
  return { ...copy, [FUTURE_FIELD]: future };
}
