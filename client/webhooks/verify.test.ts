// verifyWebhook and its errors, check by check, and generateTestHeaders.
import { describe, it, expect } from 'vitest';
import { SECRET, PREVIOUS_SECRET, OTHER_SECRET, T, EVENT_ID, EVENT, BODY, CALLBACK_BODY, CALLBACK_EVENT_ID, at, headersFor, verify, caught, codeOf, independentHmac } from './fixtures.ts';
import {
  EVENT_ID_HEADER,
  SIGNATURE_HEADER,
  WEBHOOK_VERIFICATION_ERROR_CODES,
  computeSignature,
  generateSecret,
  generateTestHeaders,
  parseSignatureHeader,
  signatureHeader,
  verifyWebhook,
} from './index.ts';
import type { VerifyWebhookInput, WebhookVerificationErrorCode } from './index.ts';

// ---- verification ---------------------------------------------------------------------

describe('verifyWebhook: valid requests', () => {
  it('verifies a string body and returns the parsed event, event id, timestamp and secret index', () => {
    const result = verifyWebhook<typeof EVENT>({ rawBody: BODY, headers: headersFor(BODY), secrets: SECRET, now: at(T) });
    expect(result).toEqual({ event: EVENT, eventId: EVENT_ID, timestamp: T, secretIndex: 0 });
    expect(result.event.data.amountMinor).toBe(12_500);
  });

  it('verifies a Buffer body and a plain Uint8Array body', () => {
    const buffer = Buffer.from(BODY, 'utf8');
    expect(verify({ rawBody: buffer, headers: headersFor(buffer) }).event).toEqual(EVENT);
    const bytes = new TextEncoder().encode(BODY);
    expect(verify({ rawBody: bytes, headers: headersFor(BODY) }).event).toEqual(EVENT);
  });

  it('verifies a body with non-ASCII text, as a string and as bytes', () => {
    const event = { ...EVENT, data: { ...EVENT.data, merchantReference: 'Zürich café 東京 🚀 — naïve' } };
    const body = JSON.stringify(event);
    expect(Buffer.byteLength(body, 'utf8')).toBeGreaterThan(body.length);
    expect(verify({ rawBody: body, headers: headersFor(body) }).event).toEqual(event);
    const bytes = Buffer.from(body, 'utf8');
    expect(verify({ rawBody: bytes, headers: headersFor(body) }).event).toEqual(event);
  });

  it('verifies the raw bytes: the same JSON re-serialized (key order, whitespace, escapes) does not verify', () => {
    const raw = `{\n  "type": "order.created",\n  "id":   "${EVENT_ID}",\n  "apiVersion":"v2",\n  "createdAt": "2026-11-18T11:06:38.412Z",\n  "data": {"status": "open", "orderId": "3f1c9a52-7d4e-4b8a-9c61-2e5f0a7b8d90", "merchantReference": "caf\\u00e9", "amountMinor": 12500, "currency": "USD"}\n}\n`;
    const headers = headersFor(raw);
    const result = verify({ rawBody: raw, headers });
    expect(result.eventId).toBe(EVENT_ID);

    const reserialized = JSON.stringify(JSON.parse(raw));
    expect(reserialized).not.toBe(raw);
    expect(codeOf(() => verify({ rawBody: reserialized, headers }))).toBe('signature_mismatch');
  });

  it('accepts a header with several v1 values when one of them matches', () => {
    const good = computeSignature(SECRET, T, BODY);
    const bad = computeSignature(OTHER_SECRET, T, BODY);
    for (const value of [`t=${T},v1=${bad},v1=${good}`, `t=${T},v1=${good},v1=${bad}`, `v0=old,t=${T},v1=${good}`]) {
      const headers = { [SIGNATURE_HEADER]: value, [EVENT_ID_HEADER]: EVENT_ID };
      expect(verify({ headers }).eventId).toBe(EVENT_ID);
    }
  });

  it('accepts a payout-completed callback body that has no id; the header identifies it', () => {
    const result = verify({ rawBody: CALLBACK_BODY, headers: headersFor(CALLBACK_BODY, { eventId: CALLBACK_EVENT_ID }) });
    expect(result.eventId).toBe(CALLBACK_EVENT_ID);
    expect(result.event).toEqual(JSON.parse(CALLBACK_BODY));
  });

  it('accepts JSON that is not an object (the header alone identifies it)', () => {
    expect(verify({ rawBody: '[1,2]', headers: headersFor('[1,2]') }).event).toEqual([1, 2]);
  });
});

describe('verifyWebhook: secrets and rotation', () => {
  it('rotation: signed with the previous secret, verified with [new, previous] gives secretIndex 1', () => {
    const headers = headersFor(BODY, { secret: PREVIOUS_SECRET });
    expect(verify({ headers, secrets: [SECRET, PREVIOUS_SECRET] }).secretIndex).toBe(1);
    expect(verify({ headers: headersFor(BODY), secrets: [SECRET, PREVIOUS_SECRET] }).secretIndex).toBe(0);
    expect(codeOf(() => verify({ headers, secrets: [SECRET] }))).toBe('signature_mismatch');
  });

  it('reports the first matching secret when a header carries signatures for both', () => {
    const value = `t=${T},v1=${computeSignature(PREVIOUS_SECRET, T, BODY)},v1=${computeSignature(SECRET, T, BODY)}`;
    const headers = { [SIGNATURE_HEADER]: value, [EVENT_ID_HEADER]: EVENT_ID };
    expect(verify({ headers, secrets: [SECRET, PREVIOUS_SECRET] }).secretIndex).toBe(0);
    expect(verify({ headers, secrets: [PREVIOUS_SECRET, SECRET] }).secretIndex).toBe(0);
    expect(verify({ headers, secrets: [OTHER_SECRET, PREVIOUS_SECRET] }).secretIndex).toBe(1);
  });

  it('refuses a secret shorter than 32 bytes even when the signature would match', () => {
    const short = 'whsec_short_but_known_secret'; // 28 bytes
    const headers = {
      [SIGNATURE_HEADER]: `t=${T},v1=${independentHmac(short, T, BODY)}`,
      [EVENT_ID_HEADER]: EVENT_ID,
    };
    const error = caught(() => verify({ headers, secrets: short }));
    expect(error.code).toBe('secret_too_short');
    expect(error.secretIndex).toBe(0);
    expect(error.message).toContain('index 0');
    expect(error.message).not.toContain(short);
  });

  it('names the index of the short secret, even when another secret is fine', () => {
    const error = caught(() => verify({ secrets: [SECRET, 'x'.repeat(31)] }));
    expect(error.code).toBe('secret_too_short');
    expect(error.secretIndex).toBe(1);
    expect(error.message).toContain('index 1');
    expect(error.message).not.toContain('x'.repeat(31));
  });

  it('counts UTF-8 bytes, not characters', () => {
    const euro33 = '€'.repeat(11); // 11 characters, 33 bytes
    expect(verify({ secrets: euro33, headers: headersFor(BODY, { secret: euro33 }) }).secretIndex).toBe(0);
    expect(codeOf(() => verify({ secrets: '€'.repeat(10) + 'a' }))).toBe('secret_too_short'); // 31 bytes
    expect(verify({ secrets: 'a'.repeat(32), headers: headersFor(BODY, { secret: 'a'.repeat(32) }) }).secretIndex).toBe(0);
  });

  it('refuses an empty secret list', () => {
    expect(codeOf(() => verify({ secrets: [] }))).toBe('no_secrets');
    expect(codeOf(() => verify({ secrets: undefined as unknown as string }))).toBe('no_secrets');
    expect(codeOf(() => verify({ secrets: '' }))).toBe('secret_too_short');
  });

  it('rejects a wrong secret', () => {
    expect(codeOf(() => verify({ secrets: OTHER_SECRET }))).toBe('signature_mismatch');
    expect(codeOf(() => verify({ secrets: [OTHER_SECRET, PREVIOUS_SECRET] }))).toBe('signature_mismatch');
  });
});

describe('verifyWebhook: tampering', () => {
  it('rejects a tampered body', () => {
    const tampered = BODY.replace('"amountMinor":12500', '"amountMinor":12501');
    expect(tampered).not.toBe(BODY);
    expect(codeOf(() => verify({ rawBody: tampered }))).toBe('signature_mismatch');
    expect(codeOf(() => verify({ rawBody: `${BODY} ` }))).toBe('signature_mismatch');
    expect(codeOf(() => verify({ rawBody: Buffer.from(tampered) }))).toBe('signature_mismatch');
  });

  it('rejects a replayed signature with a changed timestamp', () => {
    const sig = computeSignature(SECRET, T, BODY);
    const headers = { [SIGNATURE_HEADER]: `t=${T + 1},v1=${sig}`, [EVENT_ID_HEADER]: EVENT_ID };
    expect(codeOf(() => verify({ headers }))).toBe('signature_mismatch');
  });
});

describe('verifyWebhook: timestamp tolerance', () => {
  it('accepts t exactly 300 s old and rejects 301 s old', () => {
    expect(verify({ now: at(T + 300) }).timestamp).toBe(T);
    const error = caught(() => verify({ now: at(T + 301) }));
    expect(error.code).toBe('timestamp_out_of_tolerance');
    expect(error.message).toContain('301 seconds old');
  });

  it('accepts t exactly 300 s in the future and rejects 301 s in the future', () => {
    expect(verify({ now: at(T - 300) }).timestamp).toBe(T);
    const error = caught(() => verify({ now: at(T - 301) }));
    expect(error.code).toBe('timestamp_out_of_tolerance');
    expect(error.message).toContain('301 seconds in the future');
  });

  it('compares whole Unix seconds of the injected clock', () => {
    expect(verify({ now: () => (T + 300) * 1000 + 999 }).timestamp).toBe(T);
    expect(codeOf(() => verify({ now: () => (T + 301) * 1000 }))).toBe('timestamp_out_of_tolerance');
  });

  it('honours a custom tolerance, including zero', () => {
    expect(verify({ now: at(T + 600), toleranceSeconds: 600 }).timestamp).toBe(T);
    expect(codeOf(() => verify({ now: at(T + 61), toleranceSeconds: 60 }))).toBe('timestamp_out_of_tolerance');
    expect(verify({ now: at(T), toleranceSeconds: 0 }).timestamp).toBe(T);
    expect(codeOf(() => verify({ now: at(T + 1), toleranceSeconds: 0 }))).toBe('timestamp_out_of_tolerance');
  });

  it('uses Date.now when no clock is given', () => {
    const t = Math.floor(Date.now() / 1000);
    expect(verifyWebhook({ rawBody: BODY, headers: headersFor(BODY, { t }), secrets: SECRET }).timestamp).toBe(t);
    expect(codeOf(() => verifyWebhook({ rawBody: BODY, headers: headersFor(BODY), secrets: SECRET }))).toBe(
      'timestamp_out_of_tolerance',
    );
  });

  it('rejects a timestamp out of tolerance even when the signature is valid for it', () => {
    const old = T - 3600;
    expect(codeOf(() => verify({ headers: headersFor(BODY, { t: old }) }))).toBe('timestamp_out_of_tolerance');
  });
});

describe('verifyWebhook: signature header', () => {
  it('rejects a missing header with missing_signature', () => {
    expect(codeOf(() => verify({ headers: { [EVENT_ID_HEADER]: EVENT_ID } }))).toBe('missing_signature');
    expect(codeOf(() => verify({ headers: { [SIGNATURE_HEADER]: undefined, [EVENT_ID_HEADER]: EVENT_ID } }))).toBe(
      'missing_signature',
    );
    expect(codeOf(() => verify({ headers: { [SIGNATURE_HEADER]: [], [EVENT_ID_HEADER]: EVENT_ID } }))).toBe(
      'missing_signature',
    );
    expect(codeOf(() => verify({ headers: new Headers({ [EVENT_ID_HEADER]: EVENT_ID }) }))).toBe('missing_signature');
  });

  const good = () => computeSignature(SECRET, T, BODY);
  const malformed: Array<[string, () => string]> = [
    ['empty', () => ''],
    ['garbage', () => 'garbage'],
    ['missing t', () => `v1=${good()}`],
    ['missing v1', () => `t=${T}`],
    ['63 hex', () => `t=${T},v1=${good().slice(0, 63)}`],
    ['uppercase hex', () => `t=${T},v1=${good().toUpperCase()}`],
    ['13-digit t', () => `t=${T}000,v1=${good()}`],
    ['duplicate t', () => `t=${T},t=${T},v1=${good()}`],
    ['whitespace inside', () => `t=${T}, v1=${good()}`],
  ];

  it.each(malformed)('rejects a malformed header (%s) with malformed_signature', (_label, value) => {
    const headers = { [SIGNATURE_HEADER]: value(), [EVENT_ID_HEADER]: EVENT_ID };
    expect(codeOf(() => verify({ headers }))).toBe('malformed_signature');
    expect(codeOf(() => verify({ headers: new Headers(headers) }))).toBe('malformed_signature');
  });

  it('rejects a signature header sent more than once', () => {
    const value = signatureHeader(SECRET, T, BODY);
    expect(codeOf(() => verify({ headers: { [SIGNATURE_HEADER]: [value, value], [EVENT_ID_HEADER]: EVENT_ID } }))).toBe(
      'malformed_signature',
    );
    // The same name under two spellings counts twice.
    expect(
      codeOf(() => verify({ headers: { 'Service-Signature': value, 'service-signature': value, [EVENT_ID_HEADER]: EVENT_ID } })),
    ).toBe('malformed_signature');
    // A fetch Headers object joins repeats with ", ", which the strict grammar refuses.
    const headers = new Headers({ [EVENT_ID_HEADER]: EVENT_ID });
    headers.append(SIGNATURE_HEADER, value);
    headers.append(SIGNATURE_HEADER, value);
    expect(codeOf(() => verify({ headers }))).toBe('malformed_signature');
  });

  it('takes the value of a one-element array', () => {
    const headers = { [SIGNATURE_HEADER]: [signatureHeader(SECRET, T, BODY)], [EVENT_ID_HEADER]: [EVENT_ID] };
    expect(verify({ headers }).eventId).toBe(EVENT_ID);
  });
});

describe('verifyWebhook: header containers', () => {
  it('reads a fetch Headers object', () => {
    expect(verify({ headers: new Headers(headersFor(BODY)) }).eventId).toBe(EVENT_ID);
  });

  it('reads a plain object case-insensitively, with mixed-case names', () => {
    const h = headersFor(BODY);
    const headers = {
      'content-type': 'application/json',
      'SERVICE-SIGNATURE': h[SIGNATURE_HEADER],
      'service-EVENT-id': EVENT_ID,
    };
    expect(verify({ headers }).eventId).toBe(EVENT_ID);
  });

  it("reads Node's lowercase req.headers", () => {
    const h = headersFor(BODY);
    const headers = { 'service-signature': h[SIGNATURE_HEADER], 'service-event-id': EVENT_ID };
    expect(verify({ headers }).eventId).toBe(EVENT_ID);
  });
});

describe('verifyWebhook: body and event id', () => {
  it('reports invalid JSON only after the signature has passed', () => {
    const invalid = '{"id": "' + EVENT_ID + '", "type": ';
    expect(codeOf(() => verify({ rawBody: invalid, headers: headersFor(invalid) }))).toBe('invalid_json');
    // The same invalid body, tampered: the signature is checked first.
    expect(codeOf(() => verify({ rawBody: `${invalid}x`, headers: headersFor(invalid) }))).toBe('signature_mismatch');
    // And an invalid body is not even looked at when the secret is wrong.
    expect(codeOf(() => verify({ rawBody: invalid, headers: headersFor(invalid), secrets: OTHER_SECRET }))).toBe(
      'signature_mismatch',
    );
  });

  it('reports a signed body that is not UTF-8, or starts with a byte order mark, as invalid_json', () => {
    const notUtf8 = Uint8Array.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d]); // {"a":"\xff"}
    expect(codeOf(() => verify({ rawBody: notUtf8, headers: headersFor(notUtf8) }))).toBe('invalid_json');
    const bom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(BODY)]);
    expect(codeOf(() => verify({ rawBody: bom, headers: headersFor(bom) }))).toBe('invalid_json');
    expect(codeOf(() => verify({ rawBody: `\uFEFF${BODY}`, headers: headersFor(`\uFEFF${BODY}`) }))).toBe('invalid_json');
  });

  it('does not put the body in the invalid_json error', () => {
    const invalid = '{"customerEmail":"ana@example.com",';
    const error = caught(() => verify({ rawBody: invalid, headers: headersFor(invalid) }));
    expect(error.code).toBe('invalid_json');
    expect(error.message).not.toContain('ana@example.com');
    expect(error.cause).toBeUndefined();
  });

  it('rejects a missing or empty Service-Event-Id header', () => {
    const sig = signatureHeader(SECRET, T, BODY);
    expect(codeOf(() => verify({ headers: { [SIGNATURE_HEADER]: sig } }))).toBe('missing_event_id');
    expect(codeOf(() => verify({ headers: { [SIGNATURE_HEADER]: sig, [EVENT_ID_HEADER]: '' } }))).toBe('missing_event_id');
    expect(codeOf(() => verify({ headers: { [SIGNATURE_HEADER]: sig, [EVENT_ID_HEADER]: '  ' } }))).toBe('missing_event_id');
    expect(codeOf(() => verify({ headers: new Headers({ [SIGNATURE_HEADER]: sig }) }))).toBe('missing_event_id');
    const callbackSig = signatureHeader(SECRET, T, CALLBACK_BODY);
    expect(codeOf(() => verify({ rawBody: CALLBACK_BODY, headers: { [SIGNATURE_HEADER]: callbackSig } }))).toBe(
      'missing_event_id',
    );
  });

  it('rejects a Service-Event-Id that differs from the body id', () => {
    const other = 'f'.repeat(64);
    const error = caught(() => verify({ headers: headersFor(BODY, { eventId: other }) }));
    expect(error.code).toBe('event_id_mismatch');
    expect(error.message).toContain('Service-Event-Id');
  });

  it('rejects a body whose id is not a string', () => {
    const body = JSON.stringify({ ...EVENT, id: 42 });
    expect(codeOf(() => verify({ rawBody: body, headers: headersFor(body, { eventId: '42' }) }))).toBe('event_id_mismatch');
  });

  it('rejects several Service-Event-Id values', () => {
    const sig = signatureHeader(SECRET, T, CALLBACK_BODY);
    const plain = { [SIGNATURE_HEADER]: sig, [EVENT_ID_HEADER]: [CALLBACK_EVENT_ID, EVENT_ID] };
    expect(codeOf(() => verify({ rawBody: CALLBACK_BODY, headers: plain }))).toBe('event_id_mismatch');
    const headers = new Headers({ [SIGNATURE_HEADER]: sig });
    headers.append(EVENT_ID_HEADER, CALLBACK_EVENT_ID);
    headers.append(EVENT_ID_HEADER, EVENT_ID);
    expect(codeOf(() => verify({ rawBody: CALLBACK_BODY, headers }))).toBe('event_id_mismatch');
  });
});

describe('verifyWebhook: order of checks', () => {
  const wrongSig = `t=${T},v1=${computeSignature(OTHER_SECRET, T, BODY)}`;
  const cases: Array<[string, WebhookVerificationErrorCode, Partial<VerifyWebhookInput>]> = [
    ['no secrets before a missing header', 'no_secrets', { secrets: [], headers: {} }],
    ['short secret before a missing header', 'secret_too_short', { secrets: 'short', headers: {} }],
    ['short secret before a valid signature', 'secret_too_short', { secrets: [SECRET, 'short'] }],
    ['missing header before anything about the body', 'missing_signature', { headers: {}, rawBody: 'not json' }],
    [
      'malformed header before tolerance',
      'malformed_signature',
      { headers: { [SIGNATURE_HEADER]: `t=${T},v1=XYZ` }, now: at(T + 10_000) },
    ],
    [
      'tolerance before the signature',
      'timestamp_out_of_tolerance',
      { headers: { [SIGNATURE_HEADER]: wrongSig, [EVENT_ID_HEADER]: EVENT_ID }, now: at(T + 301) },
    ],
    [
      'signature before JSON',
      'signature_mismatch',
      { rawBody: 'not json', headers: { [SIGNATURE_HEADER]: wrongSig } },
    ],
    [
      'JSON before the event id header',
      'invalid_json',
      { rawBody: 'not json', headers: { [SIGNATURE_HEADER]: signatureHeader(SECRET, T, 'not json') } },
    ],
    [
      'event id header before the body id',
      'missing_event_id',
      { headers: { [SIGNATURE_HEADER]: signatureHeader(SECRET, T, BODY) } },
    ],
    ['body id last', 'event_id_mismatch', { headers: headersFor(BODY, { eventId: 'other' }) }],
  ];

  it.each(cases)('%s', (_label, code, overrides) => {
    expect(codeOf(() => verify(overrides))).toBe(code);
  });
});

describe('verifyWebhook: programming errors', () => {
  it('throws TypeError for a parsed body instead of the raw one', () => {
    expect(() => verify({ rawBody: EVENT as unknown as string })).toThrow(TypeError);
    expect(() => verify({ rawBody: EVENT as unknown as string })).toThrow(/raw request body/);
  });

  it('throws for a bad tolerance, a bad clock or a non-string secret', () => {
    expect(() => verify({ toleranceSeconds: -1 })).toThrow(RangeError);
    expect(() => verify({ toleranceSeconds: Number.POSITIVE_INFINITY })).toThrow(RangeError);
    expect(() => verify({ now: () => Number.NaN })).toThrow(TypeError);
    expect(() => verify({ secrets: [SECRET, 42 as unknown as string] })).toThrow(TypeError);
  });
});

describe('WebhookVerificationError', () => {
  it('is an Error with a name and a code from the documented list', () => {
    const error = caught(() => verify({ secrets: OTHER_SECRET }));
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe('WebhookVerificationError');
    expect(WEBHOOK_VERIFICATION_ERROR_CODES).toContain(error.code);
    expect([...WEBHOOK_VERIFICATION_ERROR_CODES].sort()).toEqual(
      [
        'missing_signature',
        'malformed_signature',
        'timestamp_out_of_tolerance',
        'signature_mismatch',
        'missing_event_id',
        'event_id_mismatch',
        'invalid_json',
        'secret_too_short',
        'no_secrets',
      ].sort(),
    );
  });

  it('never puts a secret or an expected signature in a message', () => {
    const expectedForSecret = computeSignature(SECRET, T, BODY);
    const tampered = `${BODY} `;
    const expectedForTampered = [SECRET, PREVIOUS_SECRET].map((s) => computeSignature(s, T, tampered));
    const failures: Array<() => unknown> = [
      () => verify({ rawBody: tampered, secrets: [SECRET, PREVIOUS_SECRET] }),
      () => verify({ secrets: [SECRET, PREVIOUS_SECRET.slice(0, 20)] }),
      () => verify({ headers: { [SIGNATURE_HEADER]: `t=${T},v1=${'0'.repeat(64)}`, [EVENT_ID_HEADER]: EVENT_ID } }),
      () => verify({ headers: { [SIGNATURE_HEADER]: `t=${T},v1=${expectedForSecret.toUpperCase()}` } }),
      () => verify({ now: at(T + 301) }),
      () => verify({ headers: {} }),
      () => verify({ headers: headersFor(BODY, { eventId: 'x' }) }),
      () => verify({ headers: { [SIGNATURE_HEADER]: signatureHeader(SECRET, T, BODY) } }),
      () => verify({ rawBody: 'nope', headers: headersFor('nope') }),
      () => verify({ secrets: [] }),
    ];
    const forbidden = [SECRET, PREVIOUS_SECRET, PREVIOUS_SECRET.slice(0, 20), ...expectedForTampered];
    const seen = new Set<WebhookVerificationErrorCode>();
    for (const fail of failures) {
      const error = caught(fail);
      seen.add(error.code);
      for (const value of forbidden) {
        expect(error.message).not.toContain(value);
        expect(error.message.toLowerCase()).not.toContain(value.toLowerCase());
      }
      expect(error.message.length).toBeGreaterThan(10);
    }
    expect(seen.size).toBe(WEBHOOK_VERIFICATION_ERROR_CODES.length);
  });
});

// ---- test helpers ---------------------------------------------------------------------

describe('generateTestHeaders', () => {
  it('returns Content-Type, Service-Event-Id from the payload id, and a signature that verifies', () => {
    const headers = generateTestHeaders({ payload: BODY, secret: SECRET, timestamp: T });
    expect(headers).toEqual({
      'Content-Type': 'application/json',
      'Service-Event-Id': EVENT_ID,
      'Service-Signature': `t=${T},v1=${independentHmac(SECRET, T, BODY)}`,
    });
    expect(verify({ headers }).eventId).toBe(EVENT_ID);
  });

  it('uses the given event id, or a random 64-hex id for a body without id', () => {
    expect(generateTestHeaders({ payload: BODY, secret: SECRET, timestamp: T, eventId: 'custom' })[EVENT_ID_HEADER]).toBe(
      'custom',
    );
    const a = generateTestHeaders({ payload: CALLBACK_BODY, secret: SECRET, timestamp: T });
    const b = generateTestHeaders({ payload: CALLBACK_BODY, secret: SECRET, timestamp: T });
    expect(a[EVENT_ID_HEADER]).toMatch(/^[0-9a-f]{64}$/);
    expect(a[EVENT_ID_HEADER]).not.toBe(b[EVENT_ID_HEADER]);
    expect(verify({ rawBody: CALLBACK_BODY, headers: a }).eventId).toBe(a[EVENT_ID_HEADER]);
  });

  it('signs with the current time by default', () => {
    const before = Math.floor(Date.now() / 1000);
    const headers = generateTestHeaders({ payload: BODY, secret: SECRET });
    const after = Math.floor(Date.now() / 1000);
    const { timestamp } = parseSignatureHeader(headers[SIGNATURE_HEADER] ?? '');
    expect(timestamp).toBeGreaterThanOrEqual(before);
    expect(timestamp).toBeLessThanOrEqual(after);
    expect(verifyWebhook({ rawBody: BODY, headers, secrets: SECRET }).eventId).toBe(EVENT_ID);
  });

  it('refuses a short secret', () => {
    expect(() => generateTestHeaders({ payload: BODY, secret: 'short' })).toThrow(RangeError);
  });
});

// ---- the Standard Webhooks scheme --------------------------------------------------------

describe('verifyWebhook: the scheme of the request', () => {
  const secret = generateSecret();
  const both = generateTestHeaders({ payload: BODY, secret, timestamp: T, scheme: 'both' });
  const standard = generateTestHeaders({ payload: BODY, secret, timestamp: T, scheme: 'standard-webhooks' });

  it('verifies Standard Webhooks headers with the same call, eventId being webhook-id', () => {
    expect(Object.keys(standard).sort()).toEqual(['Content-Type', 'webhook-id', 'webhook-signature', 'webhook-timestamp']);
    expect(verifyWebhook({ rawBody: BODY, headers: standard, secrets: secret, now: at(T) })).toMatchObject({ eventId: EVENT_ID, timestamp: T, secretIndex: 0 });
  });

  it('takes Service-Signature when both sets are there, and the Standard Webhooks set when asked', () => {
    const broken = { ...both, 'webhook-signature': `v1,${Buffer.alloc(32).toString('base64')}` };
    expect(verifyWebhook({ rawBody: BODY, headers: broken, secrets: secret, now: at(T) }).eventId).toBe(EVENT_ID);
    expect(codeOf(() => verifyWebhook({ rawBody: BODY, headers: broken, secrets: secret, now: at(T), scheme: 'standard-webhooks' }))).toBe('signature_mismatch');
  });

  it('answers missing_signature for a request with neither set, and a RangeError for a secret that is not base64', () => {
    expect(codeOf(() => verifyWebhook({ rawBody: BODY, headers: {}, secrets: secret, now: at(T), scheme: 'standard-webhooks' }))).toBe('missing_signature');
    expect(() => verifyWebhook({ rawBody: BODY, headers: standard, secrets: 'whsec_not*base64*but*long*enough*for*the*rule', now: at(T) })).toThrow(RangeError);
  });
});
