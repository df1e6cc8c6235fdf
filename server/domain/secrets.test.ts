// The sealing key ring: its form in SECRETS_KEY, the key id every sealed value names, and the
// values sealed before there were ids (v1: the implicit key).
import { createCipheriv, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createSecretBox, IMPLICIT_KEY_ID, parseKeyRing, sealedKeyId, UnknownSealingKeyError } from './secrets.ts';

const K1 = randomBytes(32);
const K2 = randomBytes(32);
const b64 = (k: Buffer): string => k.toString('base64url');

/** A value as the release before key ids sealed it (v1.<iv>.<tag>.<ct>, no additional data). */
function sealedByOldRelease(key: Buffer, plain: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const ct = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ct.toString('base64url')].join('.');
}

describe('SECRETS_KEY as a key ring', () => {
  it('one key is the implicit id; a ring is id:key entries, the newest first, one of them perhaps without an id', () => {
    expect(parseKeyRing(b64(K1))).toEqual([{ id: IMPLICIT_KEY_ID, key: K1 }]);
    expect(parseKeyRing(`k2:${b64(K2)}, ${b64(K1)}`)).toEqual([
      { id: 'k2', key: K2 },
      { id: IMPLICIT_KEY_ID, key: K1 },
    ]);
  });

  it('refuses a bad entry, naming its place and id but never a key', () => {
    const short = b64(randomBytes(16));
    const cases: Array<[string, string]> = [
      [short, 'SECRETS_KEY must be the base64url of 32 bytes'],
      [`k2:${short},${b64(K1)}`, 'SECRETS_KEY entry 1 (key id k2) must be the base64url of 32 bytes'],
      [`k2:${b64(K2)},k.1:${b64(K1)}`, 'SECRETS_KEY entry 2: a key id is 1-32 letters, digits or dashes'],
      [`k2:${b64(K2)},k2:${b64(K1)}`, 'SECRETS_KEY names key id k2 twice'],
      [`${b64(K2)},${b64(K1)}`, `SECRETS_KEY names key id ${IMPLICIT_KEY_ID} twice`],
      [`k2:${b64(K2)},`, 'SECRETS_KEY entry 2 must be the base64url of 32 bytes'],
    ];
    for (const [text, message] of cases) {
      let thrown: Error | null = null;
      try {
        parseKeyRing(text);
      } catch (err) {
        thrown = err as Error;
      }
      expect(thrown?.message).toBe(message);
      for (const k of [short, b64(K1), b64(K2)]) expect(thrown?.message).not.toContain(k);
    }
  });
});

describe('createSecretBox with a key ring', () => {
  it('seals with the newest key, naming its id; opens what any key of the ring sealed', () => {
    const old = createSecretBox(K1);
    const ring = createSecretBox(parseKeyRing(`k2:${b64(K2)},${b64(K1)}`));
    expect(ring.keyIds).toEqual(['k2', IMPLICIT_KEY_ID]);
    const sealed = ring.seal('whsec_new');
    expect(sealed.startsWith('v2.k2.')).toBe(true);
    expect(sealedKeyId(sealed)).toBe('k2');
    expect(ring.open(sealed)).toBe('whsec_new');
    // The implicit key still seals in the old form: a release that knows no ring opens it.
    const v1 = old.seal('whsec_old');
    expect(sealedKeyId(v1)).toBe(IMPLICIT_KEY_ID);
    expect(ring.open(v1)).toBe('whsec_old');
    expect(ring.open(sealedByOldRelease(K1, 'whsec_before_ids'))).toBe('whsec_before_ids');
  });

  it('a value sealed by a key the ring lacks fails naming the id, never a key', () => {
    const withK2 = createSecretBox(parseKeyRing(`k2:${b64(K2)}`));
    let thrown: unknown = null;
    try {
      withK2.open(createSecretBox(K1).seal('whsec_x'));
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(UnknownSealingKeyError);
    expect((thrown as UnknownSealingKeyError).keyId).toBe(IMPLICIT_KEY_ID);
    expect((thrown as Error).message).not.toContain(b64(K1));
  });

  it('the key id is authenticated: a value relabelled as another key of the ring does not open', () => {
    const ring = createSecretBox(parseKeyRing(`k2:${b64(K2)},k3:${b64(K2)}`));
    const sealed = ring.seal('whsec_y');
    expect(() => ring.open(sealed.replace(/^v2\.k2\./, 'v2.k3.'))).toThrow();
    expect(sealedKeyId('v3.x.y')).toBeNull();
    expect(() => ring.open('v3.x.y')).toThrow('unrecognised sealed secret');
  });
});
