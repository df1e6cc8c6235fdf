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
  endpoint: Endpoint;
  seed: number;
  timeoutMs: number;
  now?: () => number;
}

export function standardReceiverChecks(opts: StandardChecksOptions): Check[] {
  const factory = new EventFactory(opts.seed);
  const now = (): number => Math.floor((opts.now ?? Date.now)() / 1000);
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
    rejects('future-timestamp', `a timestamp ${WINDOW_SECONDS + 1} s ahead`, [WINDOW], () => ({ t: String(now() + WINDOW_SECONDS + 1) })),
    rejects('missing-signature', 'no webhook-signature header', [HEADERS], () => ({ signature: null })),
    rejects('missing-timestamp', 'no webhook-timestamp header', [HEADERS], () => ({ timestampHeader: false })),
    rejects('missing-id', 'no webhook-id header', [HEADERS], () => ({ id: null })),
    rejects('only-other-versions', 'a list of v1a entries only', [LIST], () => ({ signature: `v1a,${randomBytes(64).toString('base64')}` })),
    rejects('unversioned-signature', 'a signature without its "v1," version', [LIST], (m) => {
      const t = String(now());
      return { t, signature: standardEntry(key, m.eventId, t, m.body).slice(3) };
    }),
  );
  return checks;
}

function withId(s: EventSample, id: string): EventSample {
  const payload = { ...(s.payload as Record<string, unknown>), id };
  return { ...s, payload, eventId: id, body: Buffer.from(JSON.stringify(payload)) };
}

function withBody(s: EventSample, body: Buffer): EventSample {
  return { ...s, body };
}
