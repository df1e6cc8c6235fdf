// The signing primitives the receiver helpers export: constants, computeSignature,
// signatureHeader, generateSecret and parseSignatureHeader.
import { createHmac } from 'node:crypto';
import { describe, it, expect } from 'vitest';
import { SECRET, T, EVENT_ID, BODY, headersFor, verify, caught, independentHmac } from './fixtures.ts';
import { verifyWebhook } from './verify.ts';
import {
  DEFAULT_TOLERANCE_SECONDS,
  EVENT_ID_HEADER,
  MIN_SECRET_BYTES,
  SIGNATURE_HEADER,
  computeSignature,
  generateSecret,
  parseSignatureHeader,
  signatureHeader,
} from './index.ts';
import { HmacKeys } from '../../signing/hmac-keys.ts';
import { RECEIVER_KEYS_KEPT, receiverKeys, secretKeyBytes, standardSignature } from '../../signing/signature.ts';
import { standardKeyBytes } from '../../signing/standard.ts';

// ---- signing -----------------------------------------------------------------------------

describe('constants', () => {
  it('match the interface document', () => {
    expect(SIGNATURE_HEADER).toBe('Service-Signature');
    expect(EVENT_ID_HEADER).toBe('Service-Event-Id');
    expect(DEFAULT_TOLERANCE_SECONDS).toBe(300);
    expect(MIN_SECRET_BYTES).toBe(32);
  });
});

describe('computeSignature', () => {
  it('matches a vector computed with openssl', () => {
    // printf '%s' '1795000000.{"id":"evt","amount":1}' | openssl dgst -sha256 -hmac 'whsec_test_secret_0123456789abcdefghijklmnop'
    expect(computeSignature('whsec_test_secret_0123456789abcdefghijklmnop', T, '{"id":"evt","amount":1}')).toBe(
      'e6a4d47058deb50927470f393e609a04b500e3ef56f21e266e7729d660c9ae22',
    );
  });

  it('equals an independent node:crypto HMAC of "<t>.<raw body>" keyed with the whole secret string', () => {
    const sig = computeSignature(SECRET, T, BODY);
    expect(sig).toMatch(/^[0-9a-f]{64}$/);
    expect(sig).toBe(independentHmac(SECRET, T, BODY));
    // The `whsec_` prefix is part of the key.
    expect(sig).not.toBe(independentHmac(SECRET.slice('whsec_'.length), T, BODY));
  });

  it('gives the same result for a string and for its UTF-8 bytes, including non-ASCII text', () => {
    const body = JSON.stringify({ id: EVENT_ID, note: 'Zürich café, 東京, emoji 🚀' });
    const bytes = new TextEncoder().encode(body);
    expect(computeSignature(SECRET, T, bytes)).toBe(computeSignature(SECRET, T, body));
    expect(computeSignature(SECRET, T, Buffer.from(body, 'utf8'))).toBe(independentHmac(SECRET, T, body));
  });

  it('hashes Uint8Array bytes as they are, without decoding them through a string', () => {
    const bytes = Uint8Array.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0xff, 0xfe, 0x7d]); // not valid UTF-8
    const sig = computeSignature(SECRET, T, bytes);
    expect(sig).toBe(independentHmac(SECRET, T, bytes));
    const lossy = new TextDecoder().decode(bytes); // replacement characters
    expect(sig).not.toBe(computeSignature(SECRET, T, lossy));
  });

  it('respects the offset and length of a Uint8Array view', () => {
    const backing = Buffer.from(`xxxx${BODY}yyyy`, 'utf8');
    const view = new Uint8Array(backing.buffer, backing.byteOffset + 4, Buffer.byteLength(BODY));
    expect(computeSignature(SECRET, T, view)).toBe(computeSignature(SECRET, T, BODY));
  });

  it('refuses secrets shorter than 32 bytes and timestamps that a header cannot carry', () => {
    expect(() => computeSignature('a'.repeat(31), T, BODY)).toThrow(RangeError);
    expect(computeSignature('a'.repeat(32), T, BODY)).toMatch(/^[0-9a-f]{64}$/);
    expect(() => computeSignature(SECRET, -1, BODY)).toThrow(RangeError);
    expect(() => computeSignature(SECRET, 1.5, BODY)).toThrow(RangeError);
    expect(() => computeSignature(SECRET, 1_000_000_000_000, BODY)).toThrow(RangeError);
    expect(() => computeSignature(SECRET, Number.NaN, BODY)).toThrow(RangeError);
    expect(() => computeSignature(SECRET, T, { id: 'x' } as unknown as string)).toThrow(TypeError);
  });
});

describe('HmacKeys', () => {
  const secret = (i: number): string => `whsec_${String(i).padStart(40, '0')}`;

  it('imports each secret once per derivation, and signs as its raw bytes do', () => {
    const keys = new HmacKeys(4);
    const key = keys.key(SECRET, secretKeyBytes);
    expect(keys.key(SECRET, secretKeyBytes)).toBe(key);
    expect(key.export()).toEqual(Buffer.from(secretKeyBytes(SECRET)));
    const standard = keys.key(SECRET, standardKeyBytes);
    expect(standard).not.toBe(key);
    expect(standard.export()).toEqual(Buffer.from(standardKeyBytes(SECRET)));
    // The signatures made with the kept keys are those of the raw bytes.
    expect(computeSignature(SECRET, T, BODY)).toBe(independentHmac(SECRET, T, BODY));
    expect(standardSignature(SECRET, EVENT_ID, T, BODY)).toBe(`v1,${createHmac('sha256', standardKeyBytes(SECRET)).update(`${EVENT_ID}.${T}.${BODY}`).digest('base64')}`);
  });

  it('keeps at most its capacity of secrets a derivation, dropping the oldest first', () => {
    const keys = new HmacKeys(16);
    const first = keys.key(secret(0), secretKeyBytes);
    for (let i = 1; i < 16; i++) keys.key(secret(i), secretKeyBytes);
    expect(keys.key(secret(0), secretKeyBytes)).toBe(first);
    keys.key(secret(16), secretKeyBytes); // one more: the oldest goes
    expect(keys.held(secretKeyBytes)).toBe(16);
    const again = keys.key(secret(0), secretKeyBytes);
    expect(again).not.toBe(first);
    expect(again.equals(first)).toBe(true);
  });

  it('keeps nothing of a secret whose key bytes cannot be derived, and throws the derivation’s RangeError', () => {
    const keys = new HmacKeys(4);
    for (let i = 0; i < 2; i++) {
      let thrown: unknown = null;
      try {
        keys.key('whsec_not base64!', standardKeyBytes);
      } catch (err) {
        thrown = err;
      }
      expect(thrown).toBeInstanceOf(RangeError);
      expect((thrown as Error).message).toBe('a Standard Webhooks secret is whsec_ (optional) followed by base64 text');
    }
    expect(keys.held(standardKeyBytes)).toBe(0);
  });
});

describe('the merchant kit’s key objects', () => {
  const secret = (i: number): string => `whsec_${String(i).padStart(40, '0')}`;

  it(`holds at most ${RECEIVER_KEYS_KEPT} secrets a derivation, however many it verifies and signs with`, () => {
    for (let i = 0; i < 8; i++) {
      const headers = { 'service-signature': signatureHeader(secret(i), T, BODY), 'service-event-id': EVENT_ID };
      expect(verifyWebhook({ rawBody: BODY, headers, secrets: [secret(i), secret(i + 100)], now: () => T * 1000 }).secretIndex).toBe(0);
      expect(standardSignature(secret(i), EVENT_ID, T, BODY)).toMatch(/^v1,/);
    }
    expect(RECEIVER_KEYS_KEPT).toBe(2);
    expect(receiverKeys.held(secretKeyBytes)).toBe(RECEIVER_KEYS_KEPT);
    expect(receiverKeys.held(standardKeyBytes)).toBe(RECEIVER_KEYS_KEPT);
  });
});

describe('signatureHeader', () => {
  it('is t=<t>,v1=<hex>', () => {
    expect(signatureHeader(SECRET, T, BODY)).toBe(`t=${T},v1=${independentHmac(SECRET, T, BODY)}`);
    expect(parseSignatureHeader(signatureHeader(SECRET, T, BODY))).toEqual({
      timestamp: T,
      signatures: [independentHmac(SECRET, T, BODY)],
    });
  });
});

describe('generateSecret', () => {
  it('is whsec_ + 44 letters and digits: the base64 of 33 random bytes, the same in both alphabets, without padding', () => {
    const a = generateSecret();
    const b = generateSecret();
    expect(a).toMatch(/^whsec_[A-Za-z0-9]{44}$/);
    const bytes = Buffer.from(a.slice(6), 'base64');
    expect(bytes).toHaveLength(33);
    expect(bytes.toString('base64')).toBe(a.slice(6));
    expect(Buffer.from(a.slice(6), 'base64url').equals(bytes)).toBe(true);
    expect(a).not.toBe(b);
    expect(Buffer.byteLength(a, 'utf8')).toBeGreaterThanOrEqual(MIN_SECRET_BYTES);
  });

  it('makes secrets that sign and verify', () => {
    const secret = generateSecret();
    expect(verify({ secrets: secret, headers: headersFor(BODY, { secret }) }).secretIndex).toBe(0);
  });
});

// ---- parsing -------------------------------------------------------------------------

describe('parseSignatureHeader', () => {
  const V1 = 'a'.repeat(64);
  const V1B = 'b'.repeat(64);

  it('reads t and v1', () => {
    expect(parseSignatureHeader(`t=${T},v1=${V1}`)).toEqual({ timestamp: T, signatures: [V1] });
  });

  it('accepts elements in any order, several v1 values, and ignores unknown schemes', () => {
    expect(parseSignatureHeader(`v1=${V1},t=${T},v0=legacy123,v1=${V1B}`)).toEqual({
      timestamp: T,
      signatures: [V1, V1B],
    });
  });

  it('accepts 1 to 12 digit timestamps', () => {
    expect(parseSignatureHeader(`t=0,v1=${V1}`).timestamp).toBe(0);
    expect(parseSignatureHeader(`t=999999999999,v1=${V1}`).timestamp).toBe(999_999_999_999);
  });

  it('trims only spaces and tabs around the whole value (HTTP optional whitespace)', () => {
    expect(parseSignatureHeader(` \tt=${T},v1=${V1}\t `)).toEqual({ timestamp: T, signatures: [V1] });
  });

  const malformed: Array<[string, string]> = [
    ['empty', ''],
    ['only whitespace', '   '],
    ['garbage', 'not a signature'],
    ['missing t', `v1=${V1}`],
    ['missing v1', `t=${T}`],
    ['only an unknown scheme besides t', `t=${T},v0=${V1}`],
    ['63 hex characters', `t=${T},v1=${V1.slice(1)}`],
    ['65 hex characters', `t=${T},v1=${V1}a`],
    ['uppercase hex', `t=${T},v1=${'A'.repeat(64)}`],
    ['non-hex characters', `t=${T},v1=${'g'.repeat(64)}`],
    ['13-digit t', `t=1795000000000,v1=${V1}`],
    ['empty t', `t=,v1=${V1}`],
    ['signed t', `t=+${T},v1=${V1}`],
    ['negative t', `t=-${T},v1=${V1}`],
    ['fractional t', `t=${T}.5,v1=${V1}`],
    ['duplicate t', `t=${T},t=${T},v1=${V1}`],
    ['duplicate t with different values', `t=${T},v1=${V1},t=${T - 1}`],
    ['space after comma', `t=${T}, v1=${V1}`],
    ['space around =', `t = ${T},v1=${V1}`],
    ['trailing comma', `t=${T},v1=${V1},`],
    ['empty element', `t=${T},,v1=${V1}`],
    ['element without =', `t=${T},v1,v1=${V1}`],
    ['uppercase key', `T=${T},v1=${V1}`],
    ['empty v1', `t=${T},v1=`],
    ['one bad v1 among good ones', `t=${T},v1=${V1},v1=xyz`],
    ['unknown scheme with an empty value', `t=${T},v0=,v1=${V1}`],
    ['semicolon separators', `t=${T};v1=${V1}`],
    ['newline inside', `t=${T},\nv1=${V1}`],
  ];

  it.each(malformed)('rejects %s as malformed_signature', (_label, value) => {
    const error = caught(() => parseSignatureHeader(value));
    expect(error.code).toBe('malformed_signature');
    expect(error.message).toMatch(/Service-Signature/);
  });
});
