// Checks that only a receiver following each verification rule to the letter passes: the
// ways a receiver verifies too loosely (a prefix of the digest, a hex decoder that drops what
// it cannot read, a re-serialised body, the event's createdAt instead of t, an event id compared
// without case) or too strictly (only the byte form our sender happens to write today, header
// names in one spelling, a tolerance one second short). Each check names its rule.
import { createHmac } from 'node:crypto';
import type { ChannelSpec, MessageSpec } from '../core/asyncapi.ts';
import { defineCheck } from '../core/define.ts';
import type { Check, CheckOutcome, Exchange } from '../core/check.ts';
import { exchange } from '../core/http.ts';
import { EVENT_ID_HEADER, SIGNATURE_HEADER } from '../../signing/signature.ts';
import { EventFactory } from './events.ts';
import type { EventSample } from './events.ts';
import { BODY_FORMS, applies, spell } from '../core/forms.ts';
import type { BodyForm } from '../core/forms.ts';
import { RECEIVER, REJECT_BEFORE_HANDLING, REJECT_WITH_NON_2XX, VERIFICATION_RULES } from './rules.ts';
import type { ReceiverRule } from './rules.ts';
import { hmacHex } from '../core/signature.ts';
import { acceptedOrFailure, article, rejectedOutcome } from './verdicts.ts';
import type { ChannelEndpoints, Endpoint } from './verdicts.ts';

const TOLERANCE_SECONDS = 300;
/** The age of createdAt in the rule 6 check: about the last of ten attempts (16 h). */
const OLD_EVENT_SECONDS = 16 * 3600;
/** Text that only a byte-exact UTF-8 receiver keeps: Latin-1, a euro sign, an astral emoji. */
const NON_ASCII = 'Café Zürich — 5 € ✓ 🚀';

export interface ExactChecksOptions {
  channels: ChannelSpec[];
  endpoints: ChannelEndpoints;
  seed: number;
  timeoutMs: number;
  now?: () => number;
}

/** One request as built by a check: every part explicit. */
interface Wire {
  /** Header names and values, sent in this order and spelling. */
  headers: Array<[string, string]>;
  body: Buffer;
  what: string;
}

export function exactChecks(opts: ExactChecksOptions): Check[] {
  const factory = new EventFactory(opts.seed);
  const now = opts.now ?? Date.now;
  const nowSeconds = (): number => Math.floor(now() / 1000);
  const checks: Check[] = [];

  /** Just after the start of a second, so a clock tick cannot move a boundary timestamp. */
  const earlyInSecond = async (): Promise<void> => {
    const ms = now() % 1000;
    if (ms > 250) await new Promise((r) => setTimeout(r, 1005 - ms));
  };

  for (const channel of opts.channels) {
    if (channel.messages.length === 0) continue;
    const group = `verification (${channel.id})`;
    const prefix = `verification.${channel.id}`;
    const endpointOf = (): Endpoint | string => {
      const e = opts.endpoints[channel.id];
      if (!e) return `no endpoint was given for the ${channel.id} channel`;
      return 'skip' in e ? e.skip : e;
    };

    /** The usual request: the service's headers, a fresh t, signed over `body`. */
    const wire = (endpoint: Endpoint, sample: EventSample, body: Buffer, t = nowSeconds(), v1?: string): Array<[string, string]> => {
      const { contentType, userAgent } = factory.staticHeaders(sample.message);
      return [
        ['Content-Type', contentType],
        [EVENT_ID_HEADER, sample.eventId],
        [SIGNATURE_HEADER, `t=${t},v1=${v1 ?? hmacHex(endpoint.secret, String(t), body)}`],
        ['User-Agent', userAgent],
      ];
    };
    const send = (endpoint: Endpoint, w: Wire, signal: AbortSignal, label?: string): Promise<Exchange> =>
      exchange({
        method: 'POST',
        url: endpoint.url,
        headers: Object.fromEntries(w.headers),
        body: w.body,
        timeoutMs: opts.timeoutMs,
        signal,
        ...(label !== undefined ? { label } : {}),
      });

    const add = (
      slug: string,
      kind: 'accept' | 'reject',
      title: string,
      rules: ReceiverRule[],
      messages: MessageSpec[],
      build: (sample: EventSample, endpoint: Endpoint) => Promise<Wire | string> | Wire | string,
    ): void => {
      // A message on which the check means something (build answers a string when it does not).
      if (messages.length === 0) return;
      const sampleOf = (m: MessageSpec): EventSample => factory.variation(m, `${channel.id}/${slug}`);
      const first = factory.pick(messages, `${channel.id}/${slug}`);
      const message = [first, ...messages.filter((m) => m !== first)].find((m) => canBuild(m)) ?? first;
      function canBuild(m: MessageSpec): boolean {
        try {
          const probe = build(sampleOf(m), { url: 'http://probe.invalid/', secret: 'x'.repeat(32) });
          return typeof probe !== 'string';
        } catch {
          return true; // async builders are checked at run time
        }
      }
      const sample = sampleOf(message);
      checks.push(defineCheck({
        book: RECEIVER,
        id: `${prefix}.${slug}`,
        title,
        group,
        rules: kind === 'accept' ? rules : [...rules, REJECT_WITH_NON_2XX, REJECT_BEFORE_HANDLING],
        run: async (ctx): Promise<CheckOutcome> => {
          const endpoint = endpointOf();
          if (typeof endpoint === 'string') return { status: 'skipped', reason: endpoint };
          const w = await build(sample, endpoint);
          if (typeof w === 'string') return { status: 'skipped', reason: w };
          const x = await send(endpoint, w, ctx.signal);
          if (kind === 'reject') return rejectedOutcome(x, w.what, rules[0] ?? REJECT_WITH_NON_2XX);
          const failure = acceptedOrFailure(x, { ...sample, body: w.body }, w.what, rules[0] ?? REJECT_WITH_NON_2XX);
          return failure ? { status: 'failed', failure: { ...failure, rule: failure.rule.source.includes('Delivery rules') ? failure.rule : (rules[0] ?? failure.rule) } } : { status: 'passed' };
        },
      }));
    };
    const all = channel.messages;
    const withId = all.filter((m) => m.bodyCarriesEventId);
    const withCreatedAt = all.filter((m) => 'createdAt' in ((m.payloadSchema.properties as Record<string, unknown> | undefined) ?? {}));
    const desc = (s: EventSample): string => `${article(s.message.name)} ${s.message.name} event`;

    // ---- rules 2 and 3: the exact raw bytes, whatever their form --------------------------
    for (const form of Object.keys(BODY_FORMS) as BodyForm[]) {
      add(`raw-body.${form}`, 'accept', `Accepts a body in another valid JSON form, signed over its exact bytes: ${BODY_FORMS[form]}`, [VERIFICATION_RULES[2], VERIFICATION_RULES[3]], all, (s, e) => {
        if (!applies(s.payload, form)) return `no field of ${s.message.name} can be written this way`;
        const body = spell(s.payload, form);
        return { headers: wire(e, s, body), body, what: `${desc(s)} whose body is ${BODY_FORMS[form]}, correctly signed over those exact bytes (a receiver that re-serialises or normalises the body before the HMAC rejects it)` };
      });
    }
    const nonAscii = all.filter((m) => m.examples.some((x) => typeof (x.payload as { data?: { merchantReference?: unknown } })?.data?.merchantReference === 'string'));
    add('raw-body.non-ascii', 'accept', 'Accepts a body with non-ASCII UTF-8 text, signed over its exact bytes', [VERIFICATION_RULES[2]], nonAscii, (s, e) => {
      const payload = structuredClone(s.payload) as { data: { merchantReference: string } };
      payload.data.merchantReference = NON_ASCII;
      if (!factory.variator.valid(s.message.payloadSchema, payload)) return 'merchantReference cannot hold non-ASCII text under the schema';
      const body = Buffer.from(JSON.stringify(payload), 'utf8');
      return { headers: wire(e, s, body), body, what: `${desc(s)} with merchantReference ${JSON.stringify(NON_ASCII)} as raw UTF-8, correctly signed over those bytes (a receiver that decodes the body with another charset before the HMAC rejects it)` };
    });
    add('raw-body.reindented-after-signing', 'reject', 'Rejects a body re-indented after signing (same JSON value, other bytes)', [VERIFICATION_RULES[2], VERIFICATION_RULES[3]], all, (s, e) => {
      const body = spell(s.payload, 'whitespace');
      return { headers: wire(e, s, body, nowSeconds(), hmacHex(e.secret, String(nowSeconds()), s.body)), body, what: `${desc(s)} signed over its compact bytes, then sent pretty-printed (the same JSON value; a receiver that re-serialises the body before the HMAC accepts it)` };
    });

    // ---- rule 2: what the HMAC covers ----------------------------------------------------
    add('hmac.body-only', 'reject', 'Rejects a v1 computed over the raw body alone (without "<t>.")', [VERIFICATION_RULES[2]], all, (s, e) => {
      const t = nowSeconds();
      return { headers: wire(e, s, s.body, t, hmacRaw(e.secret, s.body)), body: s.body, what: `${desc(s)} whose v1 is the HMAC of the raw body alone, not of "<t>.<raw body>"` };
    });
    add('hmac.no-period', 'reject', 'Rejects a v1 computed over "<t><raw body>" (no period)', [VERIFICATION_RULES[2]], all, (s, e) => {
      const t = nowSeconds();
      return { headers: wire(e, s, s.body, t, createNoPeriod(e.secret, t, s.body)), body: s.body, what: `${desc(s)} whose v1 is the HMAC of "<t><raw body>" without the period` };
    });

    // ---- rules 1 and 5: the whole digest, exactly as written ------------------------------
    const digest = (slug: string, title: string, rules: ReceiverRule[], change: (hex: string) => string, what: string): void =>
      add(`digest.${slug}`, 'reject', `Rejects a v1 ${title}`, rules, all, (s, e) => {
        const t = nowSeconds();
        const good = hmacHex(e.secret, String(t), s.body);
        return { headers: wire(e, s, s.body, t, change(good)), body: s.body, what: `${desc(s)} whose v1 is the correct digest ${what}` };
      });
    digest('last-char-changed', 'whose last hex character differs from the HMAC', [VERIFICATION_RULES[5], VERIFICATION_RULES[2]], (h) => h.slice(0, 63) + flipHex(h[63]!), 'with its last hex character changed (a receiver that compares only a prefix accepts it)');
    digest('second-half-changed', 'whose second half differs from the HMAC', [VERIFICATION_RULES[5], VERIFICATION_RULES[2]], (h) => h.slice(0, 32) + [...h.slice(32)].map(flipHex).join(''), 'with its last 32 hex characters changed');
    digest('truncated', 'of 32 hex characters (the first half of the HMAC)', [VERIFICATION_RULES[1], VERIFICATION_RULES[5]], (h) => h.slice(0, 32), 'cut to its first 32 hex characters (a receiver that checks the HMAC starts with v1 accepts it)');
    digest('extra-hex-char', 'of 65 hex characters (the HMAC and one more)', [VERIFICATION_RULES[1], VERIFICATION_RULES[5]], (h) => `${h}0`, 'followed by one more hex character (a hex decoder drops the odd nibble)');
    digest('extra-hex-pair', 'of 66 hex characters (the HMAC and one more byte)', [VERIFICATION_RULES[1], VERIFICATION_RULES[5]], (h) => `${h}00`, 'followed by one more byte');
    digest('trailing-garbage', 'with non-hex characters after the HMAC', [VERIFICATION_RULES[1]], (h) => `${h}zz`, 'followed by "zz" (a hex decoder stops at the first non-hex character)');
    add('digest.several-all-wrong', 'reject', 'Rejects a header whose several v1 values are all wrong', [VERIFICATION_RULES[1], VERIFICATION_RULES[5]], all, (s, e) => {
      const t = nowSeconds();
      const good = hmacHex(e.secret, String(t), s.body);
      const wrong1 = good.slice(0, 63) + flipHex(good[63]!);
      const wrong2 = flipHex(good[0]!) + good.slice(1);
      const headers = wire(e, s, s.body, t).map(([k, v]): [string, string] => (k === SIGNATURE_HEADER ? [k, `t=${t},v1=${wrong1},v1=${wrong2}`] : [k, v]));
      return { headers, body: s.body, what: `${desc(s)} whose Service-Signature carries two v1 values, each one hex character off the HMAC` };
    });

    // ---- header names are case-insensitive, their order free ------------------------------
    add('header-names.lowercase', 'accept', 'Accepts the headers with lowercase names, in another order', [VERIFICATION_RULES[1], VERIFICATION_RULES[7]], all, (s, e) => {
      const headers = wire(e, s, s.body)
        .map(([k, v]): [string, string] => [k.toLowerCase(), v])
        .reverse();
      return { headers, body: s.body, what: `${desc(s)} correctly signed, with the header names in lowercase (service-signature, service-event-id) and in reverse order; HTTP field names are case-insensitive (RFC 9110 § 5.1)` };
    });

    // ---- rule 4: the tolerance, to the second, both ways -----------------------------------
    for (const [slug, offset, words] of [
      ['timestamp.300s-old', -TOLERANCE_SECONDS, 'in the past'],
      ['timestamp.300s-ahead', TOLERANCE_SECONDS, 'in the future'],
    ] as const) {
      add(slug, 'accept', `Accepts a signature timestamp exactly ${TOLERANCE_SECONDS} s ${words} (the limit is "exceeds 300 seconds")`, [VERIFICATION_RULES[4]], all, async (s, e) => {
        await earlyInSecond();
        const t = nowSeconds() + offset;
        return {
          headers: wire(e, s, s.body, t),
          body: s.body,
          what: `${desc(s)} correctly signed with t exactly ${TOLERANCE_SECONDS} seconds ${words} (sent early in a second; only a difference that exceeds ${TOLERANCE_SECONDS} s is rejected; this check needs the receiver's clock in sync with this machine's)`,
        };
      });
    }

    // ---- rule 6: t is the attempt, createdAt the event -------------------------------------
    add('created-at.old-event-fresh-t', 'accept', `Accepts an event created ${OLD_EVENT_SECONDS / 3600} h ago in an attempt signed now (a late retry)`, [VERIFICATION_RULES[6]], withCreatedAt, (s, e) => {
      const payload = { ...(s.payload as Record<string, unknown>), createdAt: new Date(now() - OLD_EVENT_SECONDS * 1000).toISOString() };
      const body = Buffer.from(JSON.stringify(payload), 'utf8');
      return { headers: wire(e, s, body), body, what: `${desc(s)} with createdAt ${OLD_EVENT_SECONDS / 3600} hours ago and a fresh t, as the tenth attempt carries it (a receiver that applies the tolerance to createdAt rejects it)` };
    });
    add('created-at.fresh-event-stale-t', 'reject', `Rejects t ${TOLERANCE_SECONDS + 1} s old even when createdAt is now`, [VERIFICATION_RULES[6], VERIFICATION_RULES[4]], withCreatedAt, (s, e) => {
      const payload = { ...(s.payload as Record<string, unknown>), createdAt: new Date(now()).toISOString() };
      const body = Buffer.from(JSON.stringify(payload), 'utf8');
      return { headers: wire(e, s, body, nowSeconds() - TOLERANCE_SECONDS - 1), body, what: `${desc(s)} with createdAt now but t ${TOLERANCE_SECONDS + 1} seconds old (a receiver that checks createdAt instead of t accepts a replayed request)` };
    });

    // ---- rule 7: the header equals the body id, exactly ------------------------------------
    const eventId = (slug: string, title: string, change: (id: string) => string, what: string): void =>
      add(`event-id.${slug}`, 'reject', `Rejects a Service-Event-Id ${title}`, [VERIFICATION_RULES[7]], withId, (s, e) => {
        const headers = wire(e, s, s.body).map(([k, v]): [string, string] => (k === EVENT_ID_HEADER ? [k, change(v)] : [k, v]));
        return { headers, body: s.body, what: `a correctly signed ${s.message.name} event whose Service-Event-Id is the body id ${what}` };
      });
    eventId('uppercase', 'that is the body id in uppercase', (id) => id.toUpperCase(), 'in uppercase (ids compare exactly)');
    eventId('last-char-changed', 'that differs from the body id in its last character', (id) => id.slice(0, -1) + flipHex(id.slice(-1)), 'with its last character changed');
    eventId('extra-char', 'that is the body id and one more character', (id) => `${id}0`, 'with one more character');
    eventId('truncated', 'that is a prefix of the body id', (id) => id.slice(0, -1), 'without its last character');
    add('event-id.body-whitespace', 'reject', 'Rejects a body id with a trailing space that the Service-Event-Id header lacks', [VERIFICATION_RULES[7]], withId, (s, e) => {
      const payload = { ...(s.payload as Record<string, unknown>), id: `${s.eventId} ` };
      const body = Buffer.from(JSON.stringify(payload), 'utf8');
      return { headers: wire(e, s, body), body, what: `a correctly signed ${s.message.name} event whose body id is the Service-Event-Id followed by a space (a receiver that trims before comparing accepts it)` };
    });
  }
  return checks;
}

/** Another lowercase hex digit. */
function flipHex(c: string): string {
  return c === '0' ? '1' : '0';
}

function createNoPeriod(secret: string, t: number, body: Buffer): string {
  return hmacRaw(secret, Buffer.concat([Buffer.from(String(t), 'utf8'), body]));
}

function hmacRaw(secret: string, bytes: Buffer): string {
  return createHmac('sha256', Buffer.from(secret, 'utf8')).update(bytes).digest('hex');
}
