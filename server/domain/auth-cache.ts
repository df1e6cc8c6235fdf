// A short-lived cache of verified credentials, so that a request with credentials seen in
// the last few seconds costs neither a store round trip nor a hash.
//
// The bound: a revoked API key or a deactivated member is refused at most `ttlMs` after the
// change (AUTH_CACHE_TTL_MS, default 5 s) by every instance, because an entry is trusted only
// that long after the store last confirmed it. A change made through the domain in this
// process (revokeApiKey, setMemberActive) also drops the entry at once. Only successful
// authentications are cached: a wrong secret always goes to the store.
//
// API keys are looked up by their public id, and the presented secret is compared in constant
// time with the secret the store verified (held only in this process's memory, for ttlMs).
// Member tokens are looked up by their SHA-256 digest, as in the store.
import { timingSafeEqual } from 'node:crypto';
import type { Clock } from './clock.ts';
import type { Principal } from './model.ts';

export const DEFAULT_AUTH_CACHE_TTL_MS = 5_000;
/** Enough for every active credential of a busy instance; the oldest entry goes first. */
const MAX_ENTRIES = 10_000;

interface Entry<P> {
  principal: P;
  /** The verified secret (API keys) as bytes, compared in constant time. */
  secret: Buffer | null;
  /** Who the entry belongs to, for invalidation: the key id or the member id. */
  owner: string;
  expiresAt: number;
}

export class AuthCache<P> {
  private readonly entries = new Map<string, Entry<P>>();

  constructor(
    private readonly clock: Clock,
    readonly ttlMs: number = DEFAULT_AUTH_CACHE_TTL_MS,
  ) {}

  /** The cached principal for `key` if it is fresh and (when given) `secret` matches the verified one. */
  get(key: string, secret?: string): P | null {
    if (this.ttlMs <= 0) return null;
    const e = this.entries.get(key);
    if (e === undefined) return null;
    if (this.clock.now() >= e.expiresAt) {
      this.entries.delete(key);
      return null;
    }
    if (e.secret !== null) {
      if (secret === undefined) return null;
      const presented = Buffer.from(secret, 'utf8');
      if (presented.length !== e.secret.length || !timingSafeEqual(presented, e.secret)) return null;
    }
    return e.principal;
  }

  set(key: string, owner: string, principal: P, secret?: string): void {
    if (this.ttlMs <= 0) return;
    this.entries.delete(key);
    if (this.entries.size >= MAX_ENTRIES) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    this.entries.set(key, {
      principal,
      secret: secret === undefined ? null : Buffer.from(secret, 'utf8'),
      owner,
      expiresAt: this.clock.now() + this.ttlMs,
    });
  }

  /** Drops every entry of a key id or member id (revocation, deactivation in this process). */
  invalidate(owner: string): void {
    for (const [k, e] of this.entries) if (e.owner === owner) this.entries.delete(k);
  }

  clear(): void {
    this.entries.clear();
  }
}

/** Verified credentials, trusted for a few seconds (the bound above). */
export interface AuthCaches {
  apiKeys: AuthCache<Principal>;
  members: AuthCache<Principal>;
}
