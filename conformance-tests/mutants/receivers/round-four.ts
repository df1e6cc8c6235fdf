// Round four of the broken receivers (issue 41): each verifies the usual deliveries correctly
// and breaks one rule only an input the service never sends shows. `catchers` are the check
// ids meant for the defect; the suite must fail exactly those.
import { webhookChannels } from '../../../conformance/core/asyncapi.ts';
import { verifyWebhook } from '../../../client/webhooks/verify.ts';
import { isWebhookVerificationError } from '../../../signing/errors.ts';
import { startWithKnobs } from './knobs.ts';
import { listen, reply } from './serve.ts';
import type { MutantOptions, RunningReceiver } from './serve.ts';
import type { ServerResponse } from 'node:http';

export interface RoundFourReceiver {
  name: string;
  defect: string;
  start(opts: MutantOptions): Promise<RunningReceiver>;
  catchers: string[];
  withPreviousSecret?: boolean;
}

const CHANNELS = ['orderWebhooks', 'payoutCompleted'];
const both = (slug: string): string[] => CHANNELS.map((c) => `receiver.verification.${c}.${slug}`);
const REVIEW_REASONS = ['order_cancelled', 'deposit_revoked', 'late_or_missing_inclusion'];

type Headers = Record<string, string | string[] | undefined>;

/** verifyWebhook with `secrets`: the event, or the error code. */
function verify(secrets: string[], rawBody: Buffer, headers: Headers, toleranceSeconds?: number): { eventId: string; event: Record<string, unknown> } | { error: string } {
  try {
    const { eventId } = verifyWebhook({ rawBody, headers, secrets, ...(toleranceSeconds !== undefined ? { toleranceSeconds } : {}) });
    return { eventId, event: JSON.parse(rawBody.toString('utf8')) as Record<string, unknown> };
  } catch (err) {
    if (!isWebhookVerificationError(err)) throw err;
    return { error: err.code };
  }
}

/** verifyWebhook with the mutant's secrets; answers 400 and returns undefined when it fails. */
function verified(opts: MutantOptions, rawBody: Buffer, headers: Headers, res: ServerResponse): { eventId: string; event: Record<string, unknown> } | undefined {
  const v = verify(opts.secrets, rawBody, headers);
  if ('error' in v) return void reply(res, 400, { error: v.error });
  return v;
}

/** Every property name the payload schemas of the AsyncAPI document declare. */
function documentedKeys(): Set<string> {
  const keys = new Set<string>();
  const walk = (schema: unknown): void => {
    if (schema === null || typeof schema !== 'object') return;
    const props = (schema as { properties?: Record<string, unknown> }).properties;
    if (props) for (const k of Object.keys(props)) keys.add(k);
    for (const v of Object.values(schema)) walk(v);
  };
  for (const channel of webhookChannels()) for (const m of channel.messages) walk(m.payloadSchema);
  return keys;
}

function unknownKey(value: unknown, known: Set<string>): string | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  for (const [k, v] of Object.entries(value)) {
    if (!known.has(k)) return k;
    const inner = unknownKey(v, known);
    if (inner) return inner;
  }
  return undefined;
}

export const ROUND_FOUR_RECEIVERS: RoundFourReceiver[] = [
  {
    name: 't-twice-last-wins',
    defect: 'rule 1: reads the header into a map, so a second t= replaces the first',
    start: (o) =>
      startWithKnobs(o, {
        parse: (value) => {
          const pairs = value.split(',').map((e) => e.split('=') as [string, string]);
          const t = Object.fromEntries(pairs).t;
          const v1 = pairs.filter(([k, v]) => k === 'v1' && /^[0-9a-f]{64}$/.test(v)).map(([, v]) => v);
          return t !== undefined && /^[0-9]{1,12}$/.test(t) && v1.length > 0 ? { t: Number(t), v1 } : null;
        },
      }),
    catchers: both('header.t-twice'),
  },
  {
    name: 't-any-number',
    defect: 'rule 1: reads t with Number(), so "+N", "N.0", "0x…" or 13 digits pass',
    start: (o) =>
      startWithKnobs(o, {
        parse: (value) => {
          const t = Number(/^t=([^,]*),/.exec(value)?.[1] ?? 'NaN');
          const v1 = [...value.matchAll(/v1=([0-9a-f]{64})(?:,|$)/g)].map((m) => m[1]!);
          return Number.isInteger(t) && v1.length > 0 ? { t, v1 } : null;
        },
      }),
    // It also keeps the first of two t= elements.
    catchers: ['leading-zeros', 'plus-sign', 'fraction', 'exponent', 'hex', 'space', 'twice'].flatMap((f) => both(`header.t-${f}`)),
  },
  {
    name: 'duplicates-before-signature',
    defect: 'rule 3: answers 200 to a known event id before verifying the request',
    start: (o) => {
      const seen = new Set<string>();
      return listen((req, raw, res) => {
        const id = req.headers['service-event-id'];
        if (typeof id === 'string' && seen.has(id)) return reply(res, 200, { received: true, duplicate: true }); // the bug
        const ok = verified(o, raw, req.headers, res);
        if (!ok) return;
        seen.add(ok.eventId);
        reply(res, 200, { received: true });
      });
    },
    catchers: both('signature-before-duplicates'),
  },
  {
    name: 'previous-secret-any-time',
    defect: 'rule 8: the previous secret is tried without the 300 s window (a legacy fallback path)',
    start: (o) =>
      listen((req, raw, res) => {
        const [current = '', ...previous] = o.secrets;
        const ok = !('error' in verify([current], raw, req.headers)) || (previous.length > 0 && !('error' in verify(previous, raw, req.headers, Number.MAX_SAFE_INTEGER))); // the bug
        reply(res, ok ? 200 : 400, ok ? { received: true } : { error: 'signature_mismatch' });
      }),
    catchers: both('rotation.previous-secret-window'),
    withPreviousSecret: true,
  },
  {
    name: 'rejects-unknown-fields',
    defect: 'Versioning rule 2: refuses an event with a field the AsyncAPI document does not declare',
    start: (o) => {
      const known = documentedKeys();
      return listen((req, raw, res) => {
        const ok = verified(o, raw, req.headers, res);
        if (!ok) return;
        const extra = unknownKey(ok.event, known);
        if (extra) return reply(res, 422, { error: `unknown field ${extra}` }); // the bug
        reply(res, 200, { received: true });
      });
    },
    catchers: webhookChannels().flatMap((c) => c.messages.map((m) => `receiver.accepts.${m.name}.unknown-field`)),
  },
  {
    name: 'rejects-unknown-review-reason',
    defect: 'Versioning rule 2: refuses a reviewReason outside the three documented values',
    start: (o) =>
      listen((req, raw, res) => {
        const ok = verified(o, raw, req.headers, res);
        if (!ok) return;
        const reason = (ok.event.data as { reviewReason?: unknown } | undefined)?.reviewReason;
        if (typeof reason === 'string' && !REVIEW_REASONS.includes(reason)) return reply(res, 400, { error: 'unknown reviewReason' }); // the bug
        reply(res, 200, { received: true });
      }),
    catchers: ['receiver.accepts.order.payment_review_required.unknown-review-reason'],
  },
];
