// `payments-conformance receiver --scheme standard-webhooks`: a receiver of an endpoint in the
// `standard-webhooks` scheme checked by the rules of Standard Webhooks v1.0.0, to the letter:
// the signed content (id, timestamp, raw body), the key (the base64-decoded secret, given with
// or without whsec_), the signature list, the 5-minute window both ways, and deduplication on
// webhook-id (a repeated message is still answered 2xx). Every order message's documented
// examples must be accepted; each broken rule must be refused. Payout callbacks are always
// Service-Signature, so they are not sent here.
import { randomBytes } from 'node:crypto';
import type { ChannelSpec } from '../core/asyncapi.ts';
import type { Check, CheckOutcome, Exchange } from '../core/check.ts';
import { entry } from '../core/coverage.ts';
import { defineCheck, ruleBook, type RuleOf } from '../core/define.ts';
import { exchange } from '../core/http.ts';
import { standardEntry, standardKey } from '../core/standard-signature.ts';
import { judgedAhead } from './ahead.ts';
import { EventFactory, type EventSample } from './events.ts';
import { acceptedOrFailure, rejectedOutcome, type Endpoint } from './verdicts.ts';

const STANDARD = 'standard-webhooks v1.0.0 (spec/standard-webhooks.md)';
export const WINDOW_SECONDS = 300;

export const STANDARD_CATALOGUE = [
  entry('standard#headers', STANDARD, 'webhook-id, webhook-timestamp and webhook-signature on every message'),
  entry('standard#signed-content', STANDARD, 'the signed content is "<msg_id>.<timestamp>.<payload>", over the raw body'),
  entry('standard#secret', STANDARD, 'the key is the base64-decoded secret; whsec_ is a prefix, not part of the key'),
  entry('standard#signature-list', STANDARD, 'webhook-signature is a space-delimited list of "<version>,<signature>"; any v1 matching is enough, other versions are ignored'),
  entry('standard#timestamp', STANDARD, 'reject timestamps outside a tolerance window (5 minutes) in either direction'),
  entry('standard#rotation', 'PRODUCT.md § Rotation in both schemes', 'during a rotation a message in flight may carry the previous secret alone: the receiver accepts it, within the same window'),
  entry('standard#idempotency', STANDARD, 'webhook-id is the idempotency key: a message delivered again is the same message'),
] as const;

export const STANDARD_BOOK = ruleBook('receiver', STANDARD_CATALOGUE);
type StandardRule = RuleOf<typeof STANDARD_BOOK>;

const rule = (id: (typeof STANDARD_CATALOGUE)[number]['id'], quote: string): StandardRule => ({ source: `${STANDARD} § ${id.split('#')[1]}`, covers: [id], quote });
const HEADERS = rule('standard#headers', 'Each webhook carries webhook-id, webhook-timestamp and webhook-signature; a request without them cannot be verified.');
const CONTENT = rule('standard#signed-content', 'The content to sign is composed by concatenating the id, timestamp and payload, separated by the full-stop character (.); the payload is the exact body as sent.');
const SECRET = rule('standard#secret', 'The secret is base64 encoded and prefixed with whsec_ for easy identification; the key is the decoded bytes.');
const LIST = rule('standard#signature-list', 'The signature header is a space-delimited list of signatures and their versions, e.g. "v1,<sig> v1,<sig2>"; verify against each v1 and ignore versions you do not know.');
const WINDOW = rule('standard#timestamp', 'Verify the timestamp against the current time and reject messages outside a tolerance window, to prevent replay attacks.');
const ROTATION = rule('standard#rotation', 'During a secret rotation the receiver verifies with the previous secret too: a message in flight signed with it alone is still valid (within the same window).');
const IDEMPOTENT = rule('standard#idempotency', 'webhook-id is unique per message and the same on every retry: use it to process each message once, and still answer 2xx.');

interface Send {
  secret?: string;
  key?: Buffer;
  /** webhook-timestamp text; default now. */
  t?: string;
  /** The id header (null: absent); default the sample's. */
  id?: string | null;
  /** The whole webhook-signature value (null: absent); default one v1 entry. */
  signature?: string | null;
  /** The id signed over, when it differs from the header. */
  signedId?: string;
  body?: Buffer;
  sentBody?: Buffer;
  timestampHeader?: boolean;
}

export interface StandardChecksOptions {
  channel: ChannelSpec;
  /** With `previousSecret`, the rotation check runs; without it, it is not reached. */
  endpoint: Endpoint;
  seed: number;
  timeoutMs: number;
  now?: () => number;
}

export function standardReceiverChecks(opts: StandardChecksOptions): Check[] {
  const factory = new EventFactory(opts.seed);
  const nowMs = opts.now ?? Date.now;
  const now = (): number => Math.floor(nowMs() / 1000);
  const { endpoint } = opts;
  const key = standardKey(endpoint.secret);
  const samples = opts.channel.messages.map((m) => factory.examples(m)[0]).filter((s): s is EventSample => s !== undefined);
  const base = samples.find((s) => s.message.name === 'order.paid') ?? samples[0];
  if (!base) return [];
  /** A new message id each time: a receiver that deduplicates must not take a check's request for a repeat. */
  const fresh = (s: EventSample): EventSample => withId(s, randomBytes(32).toString('hex'));

  function send(s: EventSample, o: Send, signal: AbortSignal, label?: string): Promise<Exchange> {
    const t = o.t ?? String(now());
    const body = o.body ?? s.body;
    const headers: Record<string, string> = { 'Content-Type': 'application/json', 'User-Agent': factory.staticHeaders(s.message).userAgent };
    if (o.id !== null) headers['webhook-id'] = o.id ?? s.eventId;
    if (o.timestampHeader !== false) headers['webhook-timestamp'] = t;
    const signature = o.signature === undefined ? standardEntry(o.key ?? (o.secret ? standardKey(o.secret) : key), o.signedId ?? s.eventId, t, body) : o.signature;
    if (signature !== null) headers['webhook-signature'] = signature;
    return exchange({ method: 'POST', url: endpoint.url, headers, body: o.sentBody ?? body, timeoutMs: opts.timeoutMs, signal, ...(label ? { label } : {}) });
  }

  const accepts = (id: string, title: string, rules: StandardRule[], build: (signal: AbortSignal) => Promise<{ x: Exchange; s: EventSample; what: string }>): Check =>
    defineCheck({
      book: STANDARD_BOOK,
      id: `standard.${id}`,
      title,
      group: 'standard-webhooks',
      rules,
      run: async ({ signal }): Promise<CheckOutcome> => {
        const { x, s, what } = await build(signal);
        const failure = acceptedOrFailure(x, s, what, rules[0]!);
        return failure ? { status: 'failed', failure } : { status: 'passed' };
      },
    });
  const rejects = (id: string, title: string, rules: StandardRule[], o: (s: EventSample) => Send): Check =>
    defineCheck({
      book: STANDARD_BOOK,
      id: `standard.rejects.${id}`,
      title: `Rejects ${title}`,
      group: 'standard-webhooks',
      rules,
      run: async ({ signal }) => {
        const m = fresh(base);
        return rejectedOutcome(await send(m, o(m), signal), `a message with ${title}`, rules[0]!);
      },
    });

  const checks: Check[] = samples.map((s) =>
    accepts(`accepts.${s.message.name}`, `Accepts ${s.message.name} (${s.origin}) signed by the standard`, [HEADERS, CONTENT, SECRET], async (signal) => {
      const m = fresh(s);
      return { x: await send(m, {}, signal), s: m, what: `the ${s.origin}` };
    }),
  );
  const other = (): Buffer => standardKey(`whsec_${randomBytes(33).toString('base64')}`);
  const other1 = (s: EventSample, t: string): string => standardEntry(other(), s.eventId, t, s.body);
  checks.push(
    accepts('raw-body', 'Accepts a body in another JSON layout, signed over its exact bytes (the raw body, never re-serialised)', [CONTENT], async (signal) => {
      const m = fresh(base);
      const pretty = withBody(m, Buffer.from(JSON.stringify(JSON.parse(m.body.toString('utf8')), null, 2)));
      return { x: await send(pretty, {}, signal), s: pretty, what: 'a pretty-printed body signed over its exact bytes' };
    }),
    accepts('signature-list', 'Accepts a signature list whose matching v1 entry comes second (a rotation)', [LIST], async (signal) => {
      const m = fresh(base);
      const t = String(now());
      return { x: await send(m, { t, signature: `${other1(m, t)} ${standardEntry(key, m.eventId, t, m.body)}` }, signal), s: m, what: 'a list "v1,<other secret> v1,<this secret>"' };
    }),
    accepts('signature-list-first', 'Accepts a list whose matching v1 entry comes first, before another v1 and before an unknown version (v1a)', [LIST], async (signal) => {
      const m = fresh(base);
      const t = String(now());
      const mine = standardEntry(key, m.eventId, t, m.body);
      const first = await send(m, { t, signature: `${mine} ${other1(m, t)}` }, signal, 'v1,<this secret> v1,<other secret>');
      if (first.response.status === null || first.response.status >= 300) return { x: first, s: m, what: 'a list "v1,<this secret> v1,<other secret>"' };
      const n = fresh(base);
      const tn = String(now());
      const x = await send(n, { t: tn, signature: `${standardEntry(key, n.eventId, tn, n.body)} v1a,${randomBytes(64).toString('base64')}` }, signal, 'v1,<this secret> v1a,<...>');
      return { x, s: n, what: 'a list "v1,<this secret> v1a,<...>" (an unknown version after the matching entry)' };
    }),
    accepts('other-versions', 'Accepts a list with an entry of another version (v1a) before the v1', [LIST], async (signal) => {
      const m = fresh(base);
      const t = String(now());
      return { x: await send(m, { t, signature: `v1a,${randomBytes(64).toString('base64')} ${standardEntry(key, m.eventId, t, m.body)}` }, signal), s: m, what: 'a list "v1a,<...> v1,<this secret>"' };
    }),
    accepts('window-edge', `Accepts a timestamp ${WINDOW_SECONDS - 5} s old (inside the window)`, [WINDOW], async (signal) => {
      const m = fresh(base);
      return { x: await send(m, { t: String(now() - WINDOW_SECONDS + 5) }, signal), s: m, what: `a message signed ${WINDOW_SECONDS - 5} s ago` };
    }),
    accepts('duplicate', 'Accepts the same message (same webhook-id) delivered twice: 2xx both times, processed once', [IDEMPOTENT], async (signal) => {
      const m = fresh(base);
      const first = await send(m, {}, signal, 'first delivery');
      if (first.response.status === null || first.response.status >= 300) return { x: first, s: m, what: 'the first delivery of a message' };
      return { x: await send(m, {}, signal, 'the same message again'), s: m, what: 'the same message (same webhook-id) delivered again' };
    }),
    rejects('tampered-body', 'a body changed after signing', [CONTENT], (m) => ({ sentBody: Buffer.from(`${m.body.toString('utf8')} `) })),
    rejects('id-not-signed', 'a webhook-id other than the one signed', [CONTENT], () => ({ signedId: randomBytes(32).toString('hex') })),
    rejects('wrong-secret', "another endpoint's secret", [SECRET], () => ({ key: other() })),
    rejects('key-not-decoded', 'a signature keyed with the secret text itself (not base64-decoded)', [SECRET], () => ({ key: Buffer.from(endpoint.secret, 'utf8') })),
    rejects('stale-timestamp', `a timestamp ${WINDOW_SECONDS + 1} s old`, [WINDOW], () => ({ t: String(now() - WINDOW_SECONDS - 1) })),
    defineCheck({
      book: STANDARD_BOOK,
      id: 'standard.rejects.future-timestamp',
      title: `Rejects a timestamp ${WINDOW_SECONDS + 1} s ahead`,
      group: 'standard-webhooks',
      rules: [WINDOW],
      run: async ({ signal }) => {
        const x = await judgedAhead((ms) => send(fresh(base), { t: String(Math.floor(ms / 1000) + WINDOW_SECONDS + 1) }, signal), nowMs);
        return rejectedOutcome(x, `a message with a timestamp ${WINDOW_SECONDS + 1} s ahead`, WINDOW);
      },
    }),
    rejects('missing-signature', 'no webhook-signature header', [HEADERS], () => ({ signature: null })),
    rejects('missing-timestamp', 'no webhook-timestamp header', [HEADERS], () => ({ timestampHeader: false })),
    rejects('missing-id', 'no webhook-id header', [HEADERS], () => ({ id: null })),
    rejects('only-other-versions', 'a list of v1a entries only', [LIST], () => ({ signature: `v1a,${randomBytes(64).toString('base64')}` })),
    rejects('unversioned-signature', 'a signature without its "v1," version', [LIST], (m) => {
      const t = String(now());
      return { t, signature: standardEntry(key, m.eventId, t, m.body).slice(3) };
    }),
    defineCheck({
      book: STANDARD_BOOK,
      id: 'standard.signature-before-duplicates',
      title: 'Verifies before deduplicating: a forged message reusing a webhook-id is refused before and after the genuine one, which is accepted',
      group: 'standard-webhooks',
      rules: [CONTENT, IDEMPOTENT],
      run: ({ signal }) => verifiedBeforeDuplicates(fresh(base), (m, o, label) => send(m, o, signal, label), other),
    }),
    defineCheck({
      book: STANDARD_BOOK,
      id: 'standard.rotation.previous-secret',
      title: `Accepts a message signed with the previous secret alone (a rotation), and refuses it ${WINDOW_SECONDS + 1} s old`,
      group: 'standard-webhooks',
      rules: [ROTATION, WINDOW],
      run: async ({ signal }) => {
        const previous = endpoint.previousSecret;
        if (previous === undefined) return { status: 'skipped', reason: 'no --previous-secret was given' };
        const m = fresh(base);
        const x = await send(m, { secret: previous }, signal, 'signed with the previous secret');
        const failure = acceptedOrFailure(x, m, 'a message signed with the previous secret alone (the secret before the last rotation, still valid for requests in flight)', ROTATION);
        if (failure) return { status: 'failed', failure };
        return rejectedOutcome(await send(fresh(base), { secret: previous, t: String(now() - WINDOW_SECONDS - 1) }, signal, 'previous secret, stale'), `a message signed with the previous secret, ${WINDOW_SECONDS + 1} s old`, WINDOW);
      },
    }),
  );
  return checks;
}

/**
 * A forged message (another key) with webhook-id X is refused; the genuine X is accepted; the
 * forged one is refused again. A receiver that answers a seen id before verifying accepts the
 * last one, and one that records unverified ids refuses the genuine one.
 */
async function verifiedBeforeDuplicates(m: EventSample, send: (m: EventSample, o: Send, label: string) => Promise<Exchange>, other: () => Buffer): Promise<CheckOutcome> {
  const forger = other();
  const what = `a message whose webhook-id ${m.eventId} is signed with another key`;
  const before = rejectedOutcome(await send(m, { key: forger }, 'forged, before the genuine message'), `${what} (never delivered before)`, CONTENT);
  if (before.status === 'failed') return before;
  const genuine = await send(m, {}, 'the genuine message, same id');
  const refused = acceptedOrFailure(genuine, m, 'after a forged message with its webhook-id was refused, the genuine message (the receiver recorded an id it had not verified)', IDEMPOTENT);
  if (refused) return { status: 'failed', failure: refused };
  const after = rejectedOutcome(await send(m, { key: forger }, 'forged again, after the genuine message'), `${what}, reusing the id of a message already accepted (a receiver that deduplicates before verifying accepts it)`, CONTENT);
  return after.status === 'failed' && after.failure ? { ...after, failure: { ...after.failure, exchanges: [genuine, ...after.failure.exchanges] } } : after;
}

function withId(s: EventSample, id: string): EventSample {
  const payload = { ...(s.payload as Record<string, unknown>), id };
  return { ...s, payload, eventId: id, body: Buffer.from(JSON.stringify(payload)) };
}

function withBody(s: EventSample, body: Buffer): EventSample {
  return { ...s, body };
}
