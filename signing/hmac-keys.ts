// HMAC key objects kept per secret. createHmac given raw key bytes imports them again on every
// call, which on Node 24 costs four times the HMAC of a webhook itself (24 µs against 5 µs,
// 300-byte body): a delivery signs twice, and a receiver verifies with the same secrets again
// and again. Each holder of secrets keeps its own, bounded to what it needs: the merchant kit a
// receiver's one or two (signature.ts), the service's sender the endpoints it signs for in turn
// (server/delivery/sign.ts). Kept in memory only, where the caller's own copy of each secret is.
import { createSecretKey, type KeyObject } from 'node:crypto';

/** How a secret becomes HMAC key bytes: the whole string (Service-Signature) or its base64 part (Standard Webhooks). */
export type KeyDerivation = (secret: string) => Uint8Array;

/** The key objects of the secrets last used, at most `capacity` a derivation; the oldest goes first. */
export class HmacKeys {
  readonly #kept = new WeakMap<KeyDerivation, Map<string, KeyObject>>();

  constructor(readonly capacity: number) {}

  /** The key of `secret` (its bytes by `keyBytes`), imported on its first use; nothing is kept of one that cannot be derived. */
  key(secret: string, keyBytes: KeyDerivation): KeyObject {
    const kept = this.#keptFor(keyBytes);
    let key = kept.get(secret);
    if (key === undefined) {
      key = createSecretKey(keyBytes(secret));
      if (kept.size >= this.capacity) kept.delete(kept.keys().next().value!);
      kept.set(secret, key);
    }
    return key;
  }

  /** How many secrets are kept for `keyBytes`. */
  held(keyBytes: KeyDerivation): number {
    return this.#kept.get(keyBytes)?.size ?? 0;
  }

  #keptFor(keyBytes: KeyDerivation): Map<string, KeyObject> {
    let kept = this.#kept.get(keyBytes);
    if (kept === undefined) this.#kept.set(keyBytes, (kept = new Map()));
    return kept;
  }
}
