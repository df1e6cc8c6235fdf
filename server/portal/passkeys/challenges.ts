// WebAuthn challenges: issued for one purpose to one binding (the session's CSRF token, or the
// sign-in form's pre-session cookie), answered at most once, and worthless after two minutes.
// Each binding holds at most one challenge per purpose (a new one replaces it). Issuing never
// evicts another binding's challenge: when the book is full of unexpired challenges a new one is
// refused, and the options that issue them are limited per address (window-limiter.ts), so one client
// can neither evict nor crowd out another's ceremony. PasskeyFlows keeps two books: anonymous
// sign-ins filling theirs refuse no signed-in member's ceremony. They live in this process's memory: a
// challenge must be answered on the instance that issued it (docs/operations.md, "Passkeys").
import type { Clock } from '../../domain/clock.ts';

export type ChallengePurpose = 'register' | 'sign-in' | 'reverify';

export const CHALLENGE_TTL_MS = 2 * 60_000;
/** Outstanding challenges a book keeps at most, over all bindings. */
export const MAX_OUTSTANDING = 10_000;

interface Entry {
  challenge: string;
  expiresAt: number;
}

/** The book is full of unexpired challenges: nothing was issued. */
export class ChallengeBookFull extends Error {
  override readonly name = 'ChallengeBookFull';
}

export class ChallengeBook {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly clock: Clock,
    private readonly ttlMs = CHALLENGE_TTL_MS,
    private readonly max = MAX_OUTSTANDING,
  ) {}

  /** Remembers the challenge for this purpose and binding, replacing an earlier one; throws ChallengeBookFull. */
  issue(purpose: ChallengePurpose, binding: string, challenge: string): void {
    const key = keyOf(purpose, binding);
    if (!this.entries.has(key) && this.entries.size >= this.max) this.dropExpired();
    if (!this.entries.has(key) && this.entries.size >= this.max) throw new ChallengeBookFull('too many passkey ceremonies are under way');
    this.entries.set(key, { challenge, expiresAt: this.clock.now() + this.ttlMs });
  }

  /** The unexpired challenge of this purpose and binding, removed: a second take answers null. */
  take(purpose: ChallengePurpose, binding: string): string | null {
    const key = keyOf(purpose, binding);
    const entry = this.entries.get(key);
    this.entries.delete(key);
    return entry && entry.expiresAt > this.clock.now() ? entry.challenge : null;
  }

  get size(): number {
    return this.entries.size;
  }

  private dropExpired(): void {
    const now = this.clock.now();
    for (const [key, entry] of this.entries) if (entry.expiresAt <= now) this.entries.delete(key);
  }
}

const keyOf = (purpose: ChallengePurpose, binding: string): string => `${purpose}\u0000${binding}`;
