// The subtle receivers: each verifies, but breaks one verification rule in a way a quick test
// with the service's own deliveries never shows. `catchers` are the check ids meant for that defect; the suite must fail exactly those (or at least those, where `exact` is
// false because the defect also refuses ordinary deliveries).
import { CORRECT, hmacHex } from './knobs.ts';
import type { Knobs } from './knobs.ts';

export interface SubtleReceiver {
  name: string;
  /** The rule it breaks, in the interface document's numbering. */
  defect: string;
  knobs: Partial<Knobs>;
  /** Check ids that must fail. */
  catchers: string[];
  /** False: other checks may fail too (default true: exactly the catchers fail). */
  exact?: boolean;
  /** Run with the previous secret as well (rotation). */
  withPreviousSecret?: boolean;
}

const order = (slugs: string[]): string[] => slugs.map((s) => `receiver.verification.orderWebhooks.${s}`);
const callback = (slugs: string[]): string[] => slugs.map((s) => `receiver.verification.payoutCompleted.${s}`);
const both = (slugs: string[]): string[] => [...order(slugs), ...callback(slugs)];

export const SUBTLE_RECEIVERS: SubtleReceiver[] = [
  {
    name: 'reserializes-body',
    defect: 'rules 2 and 3: HMAC over JSON.stringify(JSON.parse(body)) instead of the raw bytes',
    knobs: { signed: (raw) => JSON.stringify(JSON.parse(raw.toString('utf8'))) },
    catchers: both(['raw-body.whitespace', 'raw-body.escapes', 'raw-body.numbers', 'raw-body.reindented-after-signing']),
  },
  {
    name: 'latin1-body',
    defect: 'rule 2: decodes the body as Latin-1 and hashes the text as UTF-8 (not the exact bytes)',
    knobs: { signed: (raw) => raw.toString('latin1') },
    catchers: order(['raw-body.non-ascii']),
    // The generated variations carry non-ASCII text too, and fail with it.
    exact: false,
  },
  {
    name: 'trims-body',
    defect: 'rules 2 and 3: trims whitespace around the body before the HMAC',
    knobs: { signed: (raw) => raw.toString('utf8').trim() },
    catchers: both(['raw-body.whitespace']),
  },
  {
    name: 'digest-prefix',
    defect: 'rule 5: compares only the first 32 hex characters of the digest',
    knobs: { digestEquals: (received, expected) => received.slice(0, 32) === expected.slice(0, 32) },
    catchers: both(['digest.last-char-changed', 'digest.second-half-changed', 'digest.several-all-wrong']),
  },
  {
    name: 'loose-hex',
    defect: 'rules 1 and 5: takes t and v1 with regular expressions and compares the bytes a hex decoder makes of v1',
    knobs: {
      parse: (value) => {
        const t = /t=([0-9]+)/.exec(value)?.[1];
        const v1 = [...value.matchAll(/v1=([^,]*)/g)].map((m) => m[1] ?? '');
        return t === undefined || v1.length === 0 ? null : { t: Number(t), v1 };
      },
      digestEquals: (received, expected) => Buffer.from(received, 'hex').equals(Buffer.from(expected, 'hex')),
    },
    // Its unanchored t (the first digits after "t=") also lets a second t or a t not of 1 to 12 digits through.
    catchers: both(['digest.extra-hex-char', 'digest.trailing-garbage', 'malformed-signature.uppercase-v1', 'header.t-twice', 'header.t-leading-zeros', 'header.t-fraction', 'header.t-exponent', 'header.t-trailing-letters']),
  },
  {
    name: 'starts-with-digest',
    defect: 'rules 1 and 5: accepts a v1 that the expected digest starts with',
    knobs: {
      parse: (value) => {
        const t = /^t=([0-9]{1,12}),v1=([0-9a-f]+)$/.exec(value);
        return t ? { t: Number(t[1]), v1: [t[2]!] } : null;
      },
      digestEquals: (received, expected) => received.length >= 32 && expected.startsWith(received),
    },
    catchers: both(['digest.truncated', 'malformed-signature.short-v1']),
  },
  {
    name: 'legacy-body-signature',
    defect: 'rule 2: also accepts an HMAC of the body alone (no "<t>.")',
    knobs: { hmacs: (secret, t, signed) => [...CORRECT.hmacs(secret, t, signed), hmacHex(secret, '', signed)] },
    catchers: both(['hmac.body-only']),
  },
  {
    name: 'tolerance-off-by-one',
    defect: 'rule 4: rejects a difference of exactly 300 seconds',
    knobs: { fresh: (t, _e, now) => Math.abs(now - t) < 300 },
    catchers: both(['timestamp.300s-old', 'timestamp.300s-ahead']),
  },
  {
    name: 'uses-created-at',
    defect: 'rule 6: applies the tolerance to the event\'s createdAt instead of t',
    knobs: {
      fresh: (t, event, now) => (typeof event.createdAt === 'string' ? Math.abs(now - Date.parse(event.createdAt) / 1000) <= 300 : CORRECT.fresh(t, event, now)),
    },
    // Every order event whose createdAt is not now is refused too: the documented examples and
    // the generated variations carry fixed dates. Only the rule 6 checks are asserted.
    catchers: order(['created-at.old-event-fresh-t', 'created-at.fresh-event-stale-t']),
    exact: false,
  },
  {
    name: 'event-id-case-insensitive',
    defect: 'rule 7: compares Service-Event-Id and the body id without case',
    knobs: { eventIdEquals: (h, b) => h.toLowerCase() === b.toLowerCase() },
    catchers: order(['event-id.uppercase']),
  },
  {
    name: 'event-id-prefix',
    defect: 'rule 7: compares only the first 16 characters of the event ids',
    knobs: { eventIdEquals: (h, b) => h.slice(0, 16) === b.slice(0, 16) },
    catchers: order(['event-id.last-char-changed', 'event-id.extra-char', 'event-id.truncated', 'event-id.body-whitespace']),
  },
  {
    name: 'event-id-trimmed',
    defect: 'rule 7: trims the body id before comparing',
    knobs: { eventIdEquals: (h, b) => h === b.trim() },
    catchers: order(['event-id.body-whitespace']),
  },
  {
    name: 'case-sensitive-header-names',
    defect: 'rule 1: finds Service-Signature only when the name is spelled with capitals',
    knobs: {
      header: (req, name) => {
        const i = req.rawHeaders.indexOf(name);
        return i >= 0 ? req.rawHeaders[i + 1] : undefined;
      },
    },
    catchers: both(['header-names.lowercase']),
  },
  {
    name: 'current-secret-only',
    defect: 'rule 8: ignores the previous secret during a rotation',
    knobs: { secrets: (all) => all.slice(0, 1) },
    catchers: ['receiver.rotation.orderWebhooks', 'receiver.rotation.payoutCompleted'],
    withPreviousSecret: true,
  },
];
