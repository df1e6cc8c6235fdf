// A receiver's verification written out step by step (rules 1 to 8 of the interface document's
// "Webhook signatures"), each step a knob. With the default knobs it is correct and passes the
// receiver target; each mutant in this folder turns exactly one knob the way real receivers get
// it wrong, to prove the check meant for that rule catches it.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { parseSignatureHeader } from '../../../signing/signature.ts';
import { listen, reply } from './serve.ts';
import type { MutantOptions, RunningReceiver } from './serve.ts';

const TOLERANCE_SECONDS = 300;

export interface Knobs {
  /** Rule 1: one header value by name. */
  header(req: IncomingMessage, name: string): string | undefined;
  /** Rule 1: t and the v1 values (null: malformed). */
  parse(value: string): { t: number; v1: string[] } | null;
  /** Rules 2 and 3: the bytes the HMAC covers. */
  signed(raw: Buffer): Buffer | string;
  /** Rule 2: the HMACs (hex) that verify a request; the first is the contract's. */
  hmacs(secret: string, t: number, signed: Buffer | string): string[];
  /** Rule 5: digest comparison. */
  digestEquals(received: string, expected: string): boolean;
  /** Rules 4 and 6: whether the request is fresh. */
  fresh(t: number, event: Record<string, unknown>, nowSeconds: number): boolean;
  /** Rule 7: the header against the body id. */
  eventIdEquals(header: string, bodyId: string): boolean;
  /** Rule 8: the secrets tried. */
  secrets(all: string[]): string[];
}

export function hmacHex(secret: string, prefix: string, body: Buffer | string): string {
  const h = createHmac('sha256', Buffer.from(secret, 'utf8')).update(prefix, 'utf8');
  return (typeof body === 'string' ? h.update(body, 'utf8') : h.update(body)).digest('hex');
}

export const CORRECT: Knobs = {
  header: (req, name) => {
    const v = req.headers[name.toLowerCase()];
    return typeof v === 'string' ? v : undefined;
  },
  parse: (value) => {
    try {
      const { timestamp, signatures } = parseSignatureHeader(value);
      return { t: timestamp, v1: signatures };
    } catch {
      return null;
    }
  },
  signed: (raw) => raw,
  hmacs: (secret, t, signed) => [hmacHex(secret, `${t}.`, signed)],
  digestEquals: (received, expected) => received.length === expected.length && timingSafeEqual(Buffer.from(received, 'hex'), Buffer.from(expected, 'hex')),
  fresh: (t, _event, now) => Math.abs(now - t) <= TOLERANCE_SECONDS,
  eventIdEquals: (header, bodyId) => header === bodyId,
  secrets: (all) => all,
};

/** A receiver verifying with `CORRECT` and the knobs given; 2xx once per event id, 2xx on repeats. */
export function startWithKnobs(opts: MutantOptions, changed: Partial<Knobs>): Promise<RunningReceiver> {
  const k: Knobs = { ...CORRECT, ...changed };
  const seen = new Set<string>();
  return listen((req, raw, res) => {
    const signature = k.header(req, 'Service-Signature');
    if (signature === undefined) return reply(res, 400, { error: 'missing_signature' });
    const parsed = k.parse(signature);
    if (!parsed) return reply(res, 400, { error: 'malformed_signature' });
    const signed = k.signed(raw);
    const ok = k.secrets(opts.secrets).some((secret) => k.hmacs(secret, parsed.t, signed).some((expected) => parsed.v1.some((v) => k.digestEquals(v, expected))));
    if (!ok) return reply(res, 400, { error: 'signature_mismatch' });
    let event: Record<string, unknown>;
    try {
      event = JSON.parse(raw.toString('utf8')) as Record<string, unknown>;
    } catch {
      return reply(res, 400, { error: 'invalid_json' });
    }
    if (!k.fresh(parsed.t, event, Math.floor(Date.now() / 1000))) return reply(res, 400, { error: 'timestamp_out_of_tolerance' });
    const eventId = k.header(req, 'Service-Event-Id');
    if (!eventId) return reply(res, 400, { error: 'missing_event_id' });
    if ('id' in event && (typeof event.id !== 'string' || !k.eventIdEquals(eventId, event.id))) return reply(res, 400, { error: 'event_id_mismatch' });
    const duplicate = seen.has(eventId);
    seen.add(eventId);
    reply(res, 200, duplicate ? { received: true, duplicate: true } : { received: true });
  });
}
