// The checks of the `receiver` target, derived from the AsyncAPI document: every message of
// every channel is delivered (documented examples and seeded variations) and must be
// accepted; requests that break a verification rule must not be.
import { createHmac } from 'node:crypto';
import type { ChannelSpec, MessageSpec } from '../core/asyncapi.ts';
import { defineCheck, type UncatalogedRule } from '../core/define.ts';
import type { Check, CheckOutcome, Exchange } from '../core/check.ts';
import { describeStatus, exchange, is2xx } from '../core/http.ts';
import { EVENT_ID_HEADER, SIGNATURE_HEADER } from '../../signing/signature.ts';
import { signedHeader } from '../core/signature.ts';
import { subSeed } from '../core/seed.ts';
import { EventFactory, tamper } from './events.ts';
import { judgedAhead } from './ahead.ts';
import { exactChecks } from './exact.ts';
import { strictChecks } from './strict.ts';
import { MALFORMED_SIGNATURES, acceptedOrFailure, answered, article, rejectedOutcome, type ChannelEndpoints, type Endpoint } from './verdicts.ts';
import type { EventSample } from './events.ts';
import {
  ANSWER_2XX_AFTER_ACCEPTING,
  DELIVERY_RULES,
  EVENT_ID_HEADER_RULE,
  RECEIVER,
  REJECT_BEFORE_HANDLING,
  REJECT_WITH_NON_2XX,
  VERIFICATION_RULES,
} from './rules.ts';
import type { ReceiverRule } from './rules.ts';

/** The tolerance of rule 4, and the offset the timestamp checks use (one second beyond it). */
export const TOLERANCE_SECONDS = 300;
const OUTSIDE_TOLERANCE = TOLERANCE_SECONDS + 1;


export interface ReceiverChecksOptions {
  channels: ChannelSpec[];
  endpoints: ChannelEndpoints;
  seed: number;
  /** Generated variations delivered per message (besides the documented examples). */
  variations: number;
  timeoutMs: number;
  /** Clock in milliseconds (default `Date.now`). */
  now?: () => number;
}

interface SendOptions {
  secret?: string;
  /** `t` of the signature; default: now. */
  timestamp?: number;
  /** Replaces the whole `Service-Signature` value; null leaves the header out. */
  signature?: string | null;
  /** Replaces the `Service-Event-Id` value; null leaves the header out. */
  eventId?: string | null;
  /** Body sent instead of the signed one (the signature still covers the original). */
  body?: Buffer;
  label?: string;
}

export function receiverChecks(opts: ReceiverChecksOptions): Check[] {
  const factory = new EventFactory(opts.seed);
  const now = opts.now ?? Date.now;
  const nowSeconds = (): number => Math.floor(now() / 1000);
  const checks: Check[] = [];

  const endpointOf = (channel: ChannelSpec): Endpoint | string => {
    const e = opts.endpoints[channel.id];
    if (!e) return `no endpoint was given for the ${channel.id} channel`;
    return 'skip' in e ? e.skip : e;
  };

  async function send(endpoint: Endpoint, sample: EventSample, o: SendOptions, signal: AbortSignal): Promise<Exchange> {
    const { contentType, userAgent } = factory.staticHeaders(sample.message);
    const t = o.timestamp ?? nowSeconds();
    const headers: Record<string, string> = { 'Content-Type': contentType };
    const eventId = o.eventId === undefined ? sample.eventId : o.eventId;
    if (eventId !== null) headers[EVENT_ID_HEADER] = eventId;
    const signature = o.signature === undefined ? signedHeader(o.secret ?? endpoint.secret, t, sample.body) : o.signature;
    if (signature !== null) headers[SIGNATURE_HEADER] = signature;
    headers['User-Agent'] = userAgent;
    return exchange({
      method: 'POST',
      url: endpoint.url,
      headers,
      body: o.body ?? sample.body,
      timeoutMs: opts.timeoutMs,
      signal,
      ...(o.label !== undefined ? { label: o.label } : {}),
    });
  }

  /** A check that needs the channel's endpoint; skipped when there is none. */
  const withEndpoint = (
    channel: ChannelSpec,
    fn: (endpoint: Endpoint, signal: AbortSignal) => Promise<CheckOutcome>,
  ): ((ctx: { signal: AbortSignal }) => Promise<CheckOutcome>) => {
    return async (ctx) => {
      const endpoint = endpointOf(channel);
      if (typeof endpoint === 'string') return { status: 'skipped', reason: endpoint };
      return fn(endpoint, ctx.signal);
    };
  };

  // ---- every message: accepted when correctly signed, and again when repeated ----------
  for (const channel of opts.channels) {
    for (const message of channel.messages) {
      const group = message.name;
      const messageRule: UncatalogedRule = { source: message.pointer, quote: `${message.title}: sent on ${channel.id}${channel.operationId ? ` by ${channel.operationId}` : ''}` };
      const acceptRules = [messageRule, ANSWER_2XX_AFTER_ACCEPTING, DELIVERY_RULES[1]];

      for (const sample of factory.examples(message)) {
        const exampleName = sample.origin.replace(/^example "(.*)"$/, '$1');
        checks.push(defineCheck({
          book: RECEIVER,
          id: `accepts.${message.name}.${exampleName}`,
          title: `Accepts the documented example "${exampleName}" of ${message.name}, correctly signed`,
          group,
          rules: [{ source: `${message.pointer}/examples/${message.examples.findIndex((e) => e.name === exampleName)}` }, ...acceptRules.slice(1)],
          run: withEndpoint(channel, async (endpoint, signal) => {
            const x = await send(endpoint, sample, {}, signal);
            const failure = acceptedOrFailure(x, sample, `the documented example "${exampleName}"`, ANSWER_2XX_AFTER_ACCEPTING);
            const notes = sample.valid ? [] : [`the documented example does not match its schema (${factory.variator.errors(message.payloadSchema, sample.payload).join('; ')})`];
            return failure ? { status: 'failed', failure, notes } : { status: 'passed', notes };
          }),
        }));
      }

      if (opts.variations > 0) {
        const samples = Array.from({ length: opts.variations }, (_, i) => factory.variation(message, `variation ${i + 1}`));
        checks.push(defineCheck({
          book: RECEIVER,
          id: `accepts.${message.name}.generated`,
          title: `Accepts ${opts.variations} generated variation${opts.variations === 1 ? '' : 's'} of ${message.name} (values drawn within the schema), correctly signed`,
          group,
          rules: acceptRules,
          run: withEndpoint(channel, async (endpoint, signal) => {
            for (const sample of samples) {
              const x = await send(endpoint, sample, { label: sample.origin }, signal);
              const failure = acceptedOrFailure(x, sample, sample.origin, ANSWER_2XX_AFTER_ACCEPTING);
              if (failure) return { status: 'failed', failure };
            }
            return { status: 'passed' };
          }),
        }));
      }

      const duplicate = factory.variation(message, 'duplicate delivery');
      checks.push(defineCheck({
        book: RECEIVER,
        id: `duplicate.${message.name}`,
        title: `Answers 2xx to both attempts of the same ${message.name} event (same id and body, fresh t)`,
        group,
        rules: [DELIVERY_RULES[3], VERIFICATION_RULES[7], messageRule],
        run: withEndpoint(channel, async (endpoint, signal) => {
          // The first attempt as if sent 5 s ago (the first retry comes after about 5 s), the
          // second now: same event id and body, a fresh t.
          const first = await send(endpoint, duplicate, { timestamp: nowSeconds() - 5, label: 'first attempt' }, signal);
          const firstFailure = acceptedOrFailure(first, duplicate, `the first attempt of ${duplicate.origin}`, ANSWER_2XX_AFTER_ACCEPTING);
          if (firstFailure) return { status: 'failed', failure: firstFailure };
          const second = await send(endpoint, duplicate, { label: 'second attempt (a retry)' }, signal);
          if (is2xx(second.response)) return { status: 'passed' };
          return {
            status: 'failed',
            failure: {
              message:
                `the first attempt was answered ${describeStatus(first.response)}, the second attempt of the same event ` +
                `(Service-Event-Id ${duplicate.eventId}) ${answered(second)}; a repeated delivery must be answered 2xx ` +
                'without applying it again, or the service keeps retrying it',
              rule: DELIVERY_RULES[3],
              exchanges: [first, second],
            },
          };
        }),
      }));
    }
  }

  // ---- verification: requests that break a rule must not get a 2xx ----------------------
  for (const channel of opts.channels) {
    if (channel.messages.length === 0) continue;
    const group = `verification (${channel.id})`;
    const prefix = `verification.${channel.id}`;
    const withId = channel.messages.filter((m) => m.bodyCarriesEventId);

    const rejectCheck = (
      slug: string,
      title: string,
      rules: ReceiverRule[],
      build: (sample: EventSample, endpoint: Endpoint) => Promise<{ options: SendOptions; what: string }> | { options: SendOptions; what: string },
      {
        messages = channel.messages,
        ahead = false,
      }: {
        /** The messages to pick the sample from (default: the channel's). */
        messages?: MessageSpec[];
        /** A t ahead of the window: judged by judgedAhead (a late acceptance is tried again). */
        ahead?: boolean;
      } = {},
    ): void => {
      if (messages.length === 0) return;
      const message = factory.pick(messages, `${channel.id}/${slug}`);
      const sample = factory.variation(message, slug);
      checks.push(defineCheck({
        book: RECEIVER,
        id: `${prefix}.${slug}`,
        title,
        group,
        rules: [...rules, REJECT_WITH_NON_2XX, REJECT_BEFORE_HANDLING],
        run: withEndpoint(channel, async (endpoint, signal) => {
          let what = '';
          const attempt = async (): Promise<Exchange> => {
            const built = await build(sample, endpoint);
            what = built.what;
            return send(endpoint, sample, built.options, signal);
          };
          const x = ahead ? await judgedAhead(attempt, now) : await attempt();
          return rejectedOutcome(x, what, rules[0] ?? REJECT_WITH_NON_2XX);
        }),
      }));
    };

    rejectCheck('tampered-body', 'Rejects a body changed by one byte after signing', [VERIFICATION_RULES[2], VERIFICATION_RULES[3]], (sample) => {
      const changed = tamper(sample, factory.variator, subSeed(opts.seed, `${channel.id}/tamper`));
      return {
        options: { body: changed.body },
        what:
          `${article(sample.message.name)} ${sample.message.name} body changed after signing (byte ${changed.offset}: "${changed.from}" became "${changed.to}"; ` +
          'still valid JSON under the schema, same id); the HMAC over the raw bytes no longer matches',
      };
    });

    rejectCheck('wrong-secret', 'Rejects a signature made with another secret', [VERIFICATION_RULES[2]], (sample, endpoint) => {
      const other = factory.otherSecret(`${channel.id}/wrong`);
      return {
        options: { secret: other === endpoint.secret || other === endpoint.previousSecret ? `${other}x` : other },
        what: `${article(sample.message.name)} ${sample.message.name} event signed with a secret that is not the endpoint's`,
      };
    });

    rejectCheck('timestamp-301s-old', `Rejects a signature timestamp ${OUTSIDE_TOLERANCE} s in the past`, [VERIFICATION_RULES[4]], (sample) => ({
      options: { timestamp: nowSeconds() - OUTSIDE_TOLERANCE },
      what: `${article(sample.message.name)} ${sample.message.name} event correctly signed, but with t ${OUTSIDE_TOLERANCE} seconds in the past`,
    }));

    rejectCheck(
      'timestamp-301s-ahead',
      `Rejects a signature timestamp ${OUTSIDE_TOLERANCE} s in the future`,
      [VERIFICATION_RULES[4]],
      (sample) => ({
        options: { timestamp: nowSeconds() + OUTSIDE_TOLERANCE },
        what: `${article(sample.message.name)} ${sample.message.name} event correctly signed, but with t ${OUTSIDE_TOLERANCE} seconds in the future (rule 4 applies in either direction)`,
      }),
      { ahead: true },
    );

    for (const form of MALFORMED_SIGNATURES) {
      rejectCheck(`malformed-signature.${form.slug}`, `Rejects a malformed Service-Signature header: ${form.title}`, [VERIFICATION_RULES[1]], (sample, endpoint) => ({
        options: { signature: form.build(endpoint.secret, nowSeconds(), sample.body) },
        what: `${article(sample.message.name)} ${sample.message.name} event whose Service-Signature is malformed (${form.title})`,
      }));
    }

    rejectCheck('missing-signature', 'Rejects a request without a Service-Signature header', [VERIFICATION_RULES[1], VERIFICATION_RULES[2]], (sample) => ({
      options: { signature: null },
      what: `${article(sample.message.name)} ${sample.message.name} event without a Service-Signature header`,
    }));

    rejectCheck(
      'event-id-mismatch',
      'Rejects a Service-Event-Id header that differs from the body id',
      [VERIFICATION_RULES[7], EVENT_ID_HEADER_RULE],
      (sample) => ({
        options: { eventId: factory.freshEventId(sample.message, `${channel.id}/mismatch`) },
        what: `a correctly signed ${sample.message.name} event whose Service-Event-Id header is not the id in its body (${sample.eventId})`,
      }),
      { messages: withId },
    );

    rejectCheck(
      'missing-event-id',
      'Rejects a request without a Service-Event-Id header',
      [VERIFICATION_RULES[7], EVENT_ID_HEADER_RULE],
      (sample) => ({
        options: { eventId: null },
        what: `a correctly signed ${sample.message.name} event without a Service-Event-Id header`,
      }),
      { messages: withId },
    );
  }

  // ---- rotation: the previous secret of an in-flight request --------------------------
  for (const channel of opts.channels) {
    if (channel.messages.length === 0) continue;
    const message = factory.pick(channel.messages, `${channel.id}/rotation`);
    const sample = factory.variation(message, 'rotation');
    checks.push(defineCheck({
      book: RECEIVER,
      id: `rotation.${channel.id}`,
      title: 'Accepts a signature made with the previous secret during a rotation',
      group: 'rotation',
      rules: [VERIFICATION_RULES[8]],
      run: withEndpoint(channel, async (endpoint, signal) => {
        if (endpoint.previousSecret === undefined) {
          return { status: 'skipped', reason: `no previous secret was given for ${channel.id}` };
        }
        const x = await send(endpoint, sample, { secret: endpoint.previousSecret }, signal);
        const failure = acceptedOrFailure(x, sample, `${sample.origin}, signed with the previous secret`, VERIFICATION_RULES[8]);
        if (failure) return { status: 'failed', failure };
        return {
          status: 'passed',
          notes: [
            `${channel.id}: a signature made with the previous secret was accepted. Keep accepting it only while requests ` +
              'signed before the rotation can still arrive, then remove the previous secret.',
          ],
        };
      }),
    }));
  }

  // ---- every verification rule, to the letter (exact.ts) ---------------------------------
  checks.push(...exactChecks({ channels: opts.channels, endpoints: opts.endpoints, seed: opts.seed, timeoutMs: opts.timeoutMs, now }));
  // ---- inputs the service never sends: strict.ts ------------------------------------------
  checks.push(...strictChecks({ channels: opts.channels, endpoints: opts.endpoints, seed: opts.seed, timeoutMs: opts.timeoutMs, now }));

  return checks;
}

export { MALFORMED_SIGNATURES, type ChannelEndpoints, type Endpoint };
