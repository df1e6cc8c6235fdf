// Credentials at rest. API hashes and member tokens are 32 random bytes, so a SHA-256 digest
// is the right store for them (as for GitHub tokens): nothing to brute-force, fast to check,
// compared in constant time. Signing secrets must be usable for HMAC, so they are sealed
// with AES-256-GCM under the server's secrets key instead.
import { createCipheriv, createDecipheriv, createHash, randomBytes, timingSafeEqual } from 'node:crypto';

export function randomToken(prefix: string, bytes = 32): string {
  return `${prefix}${randomBytes(bytes).toString('base64url')}`;
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** Constant-time comparison of a presented token with a stored digest. */
export function tokenMatches(token: string, storedHash: string): boolean {
  const a = Buffer.from(hashToken(token), 'hex');
  const b = Buffer.from(storedHash, 'hex');
  return a.length === b.length && timingSafeEqual(a, b);
}

export interface SecretBox {
  seal(plain: string): string;
  open(sealed: string): string;
  /** The ids of the key ring it opens with, the newest (the one it seals with) first. */
  readonly keyIds?: readonly string[];
}

/** The id of the key given without one (SECRETS_KEY as a single key, DATA_DIR/secrets.key): what `v1.` values were sealed by. */
export const IMPLICIT_KEY_ID = 'default';
const KEY_ID = /^[A-Za-z0-9-]{1,32}$/;

/** One key of a ring: its id names it in every value it seals (never the key itself). */
export interface SealingKey {
  id: string;
  key: Buffer;
}

/** The sealing keys, the newest first: it seals with the newest and opens with whichever a value names. */
export type KeyRing = readonly SealingKey[];

/**
 * SECRETS_KEY (or DATA_DIR/secrets.key): one base64url key of 32 bytes (its id is
 * IMPLICIT_KEY_ID), or a ring `id:key,id:key,...` with the newest first, in which one entry may
 * go without `id:` (the key that sealed the values written before there were ids). Ids are 1-32
 * letters, digits or dashes. A message names an entry by its place and id, never by its key.
 */
export function parseKeyRing(text: string, source = 'SECRETS_KEY'): KeyRing {
  const entries = text.split(',').map((e) => e.trim());
  const ring = entries.map((entry, i): SealingKey => {
    const colon = entry.indexOf(':');
    const id = colon < 0 ? IMPLICIT_KEY_ID : entry.slice(0, colon);
    const where = entries.length === 1 ? '' : ` entry ${i + 1}`;
    if (!KEY_ID.test(id)) throw new Error(`${source}${where}: a key id is 1-32 letters, digits or dashes`);
    const key = Buffer.from(colon < 0 ? entry : entry.slice(colon + 1), 'base64url');
    if (key.length !== 32) throw new Error(`${source}${where}${colon < 0 ? '' : ` (key id ${id})`} must be the base64url of 32 bytes`);
    return { id, key };
  });
  const ids = ring.map((k) => k.id);
  const twice = ids.find((id, i) => ids.indexOf(id) !== i);
  if (twice !== undefined) throw new Error(`${source} names key id ${twice} twice`);
  return ring;
}

/** What every value sealed by key `id` starts with: `v1.` for the implicit key (readable by releases before key ids), `v2.<id>.` for the others. */
export function sealedPrefix(id: string): string {
  return id === IMPLICIT_KEY_ID ? 'v1.' : `v2.${id}.`;
}

/** The id of the key that sealed `sealed`, or null when it is no sealed value this code knows. */
export function sealedKeyId(sealed: string): string | null {
  if (sealed.startsWith('v1.')) return IMPLICIT_KEY_ID;
  const m = /^v2\.([A-Za-z0-9-]{1,32})\./.exec(sealed);
  return m ? (m[1] ?? null) : null;
}

/** A sealed value names a key the ring lacks: it cannot be opened here (the message names the id, never a key). */
export class UnknownSealingKeyError extends Error {
  constructor(readonly keyId: string) {
    super(`sealed by key id ${keyId}, which SECRETS_KEY does not hold`);
    this.name = 'UnknownSealingKeyError';
  }
}

/**
 * AES-256-GCM under a key ring (or one key, the implicit id). The sealed form, in base64url:
 * `v2.<key id>.<iv>.<tag>.<ciphertext>`, the `v2.<key id>` prefix authenticated as additional
 * data, so a value cannot be passed off as another key's; under the implicit key it is
 * `v1.<iv>.<tag>.<ciphertext>` as before key ids, so a release that knows no ring still opens it.
 */
export function createSecretBox(keys: Buffer | KeyRing): SecretBox {
  const ring: KeyRing = Buffer.isBuffer(keys) ? [{ id: IMPLICIT_KEY_ID, key: keys }] : keys;
  const newest = ring[0];
  if (!newest) throw new Error('the key ring is empty');
  for (const k of ring) if (k.key.length !== 32) throw new Error('the secrets key must be 32 bytes');
  const byId = new Map(ring.map((k) => [k.id, k.key]));
  return {
    keyIds: ring.map((k) => k.id),
    seal(plain) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', newest.key, iv);
      const prefix = sealedPrefix(newest.id);
      if (prefix !== 'v1.') cipher.setAAD(Buffer.from(prefix.slice(0, -1), 'utf8'));
      const ct = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      return prefix + [iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ct.toString('base64url')].join('.');
    },
    open(sealed) {
      const id = sealedKeyId(sealed);
      if (id === null) throw new Error('unrecognised sealed secret');
      const key = byId.get(id);
      if (!key) throw new UnknownSealingKeyError(id);
      const prefix = sealedPrefix(id);
      const [iv, tag, ct, extra] = sealed.slice(prefix.length).split('.');
      if (!iv || !tag || ct === undefined || extra !== undefined) throw new Error('unrecognised sealed secret');
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
      if (prefix !== 'v1.') decipher.setAAD(Buffer.from(prefix.slice(0, -1), 'utf8'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(ct, 'base64url')), decipher.final()]).toString('utf8');
    },
  };
}
