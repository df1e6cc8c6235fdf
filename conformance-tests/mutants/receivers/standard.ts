// Receivers of an endpoint in the `standard-webhooks` scheme built on the official
// `standardwebhooks` package: the correct one (verify, then deduplicate on webhook-id) and
// mutants, each with exactly one rule of the standard broken and the check meant to catch it.
import type { IncomingHttpHeaders } from 'node:http';
import { Webhook } from 'standardwebhooks';
import { listen, reply, type RunningReceiver } from './serve.ts';

/** Each defect and the check of `receiver --scheme standard-webhooks` that must fail for it. */
export const STANDARD_MUTANTS = {
  'no-timestamp-window': 'receiver.standard.rejects.stale-timestamp',
  'first-signature-only': 'receiver.standard.signature-list',
  'reserializes-body': 'receiver.standard.raw-body',
  'fails-duplicates': 'receiver.standard.duplicate',
  'whole-string-key': 'receiver.standard.rejects.key-not-decoded',
} as const;

/** Round five (issue 51): each caught by exactly the check named, and no other. */
export const STANDARD_ROUND_FIVE = {
  'last-signature-only': 'receiver.standard.signature-list-first',
  'duplicates-before-signature': 'receiver.standard.signature-before-duplicates',
  'ignores-previous-secret': 'receiver.standard.rotation.previous-secret',
} as const;
export type StandardDefect = keyof typeof STANDARD_MUTANTS | keyof typeof STANDARD_ROUND_FIVE;

type Headers = Record<string, string>;
const flat = (h: IncomingHttpHeaders): Headers => Object.fromEntries(Object.entries(h).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : (v ?? '')]));

type Verify = (raw: Buffer, headers: Headers) => void;

/** Verifies with each secret in turn (current, then previous: one Webhook per secret, as the library takes one). */
function anySecret(secrets: string[], defect: StandardDefect | null): Verify {
  const verifiers = (defect === 'ignores-previous-secret' ? secrets.slice(0, 1) : secrets).map((s) => verifier(s, defect)); // the defect: the current one only
  return (raw, h) => {
    const errors: unknown[] = [];
    for (const verify of verifiers) {
      try {
        return verify(raw, h);
      } catch (err) {
        errors.push(err);
      }
    }
    throw new AggregateError(errors, 'no secret verifies');
  };
}

/** Verifies as the defect says: the official library, except for the one broken rule. */
function verifier(secret: string, defect: StandardDefect | null): Verify {
  const wh = defect === 'whole-string-key' ? new Webhook(secret, { format: 'raw' }) : new Webhook(secret);
  if (defect === 'reserializes-body') return (raw, h) => void wh.verify(JSON.stringify(JSON.parse(raw.toString('utf8'))), h);
  if (defect === 'last-signature-only') return (raw, h) => void wh.verify(raw, { ...h, 'webhook-signature': (h['webhook-signature'] ?? '').split(' ').at(-1) ?? '' });
  if (defect === 'first-signature-only') return (raw, h) => void wh.verify(raw, { ...h, 'webhook-signature': (h['webhook-signature'] ?? '').split(' ')[0] ?? '' });
  if (defect === 'no-timestamp-window') {
    return (raw, h) => {
      const expected = wh.sign(h['webhook-id'] ?? '', new Date(Number(h['webhook-timestamp']) * 1000), raw.toString('utf8'));
      if (!(h['webhook-signature'] ?? '').split(' ').includes(expected)) throw new Error('no matching signature');
    };
  }
  return (raw, h) => void wh.verify(raw, h);
}

/** `secrets`: the current one, then the previous one during a rotation. */
export async function startStandardReceiver(secrets: string[], defect: StandardDefect | null = null): Promise<RunningReceiver> {
  const verify = anySecret(secrets, defect);
  const seen = new Set<string>();
  return listen((req, raw, res) => {
    const headers = flat(req.headers);
    if (defect === 'duplicates-before-signature' && seen.has(headers['webhook-id'] ?? '')) return reply(res, 200, { duplicate: true }); // the defect
    try {
      verify(raw, headers);
    } catch {
      reply(res, 400, { error: 'invalid signature' });
      return;
    }
    const id = headers['webhook-id'] ?? '';
    if (seen.has(id)) {
      reply(res, defect === 'fails-duplicates' ? 409 : 200, { duplicate: true });
      return;
    }
    seen.add(id);
    reply(res, 200, { received: true });
  });
}
