// WebAuthn challenges: issued for one purpose to one binding (the session's CSRF token, or the
// sign-in form's pre-session cookie), answered at most once, and worthless after two minutes.
// They live in this process's memory: a challenge must be answered on the instance that issued
// it (docs/operations.md, "Passkeys").
import type { Clock } from '../../domain/clock.ts';

export type ChallengePurpose = 'register' | 'sign-in' | 'reverify';

export const CHALLENGE_TTL_MS = 2 * 60_000;
/** Outstanding challenges kept at most; the oldest go first (each binding holds one per purpose). */
const MAX_OUTSTANDING = 10_000;

interface Entry {
  challenge: string;
  expiresAt: number;
}

export class ChallengeBook {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly clock: Clock,
    private readonly ttlMs = CHALLENGE_TTL_MS,
  ) {}

  /** Remembers the challenge for this purpose and binding, replacing an earlier one. */
  issue(purpose: ChallengePurpose, binding: string, challenge: string): void {
    const key = keyOf(purpose, binding);
    this.entries.delete(key);
    this.entries.set(key, { challenge, expiresAt: this.clock.now() + this.ttlMs });
    if (this.entries.size > MAX_OUTSTANDING) this.dropOldest();
  }

  /** The unexpired challenge of this purpose and binding, removed: a second take answers null. */
  take(purpose: ChallengePurpose, binding: string): string | null {
    const key = keyOf(purpose, binding);
    const entry = this.entries.get(key);
    this.entries.delete(key);
    return entry && entry.expiresAt > this.clock.now() ? entry.challenge : null;
  }

  private dropOldest(): void {
    const oldest = this.entries.keys().next();
    if (!oldest.done) this.entries.delete(oldest.value);
  }
}

const keyOf = (purpose: ChallengePurpose, binding: string): string => `${purpose}\u0000${binding}`;
