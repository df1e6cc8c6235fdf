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
}

/** AES-256-GCM; the sealed form is `v1.<iv>.<tag>.<ciphertext>` in base64url. */
export function createSecretBox(key: Buffer): SecretBox {
  if (key.length !== 32) throw new Error('the secrets key must be 32 bytes');
  return {
    seal(plain) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const ct = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ct.toString('base64url')].join('.');
    },
    open(sealed) {
      const [version, iv, tag, ct] = sealed.split('.');
      if (version !== 'v1' || !iv || !tag || ct === undefined) throw new Error('unrecognised sealed secret');
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(ct, 'base64url')), decipher.final()]).toString('utf8');
    },
  };
}
