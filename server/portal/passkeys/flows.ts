// The portal's passkey flows over the ceremonies: issuing a challenge to a binding (options are
// limited per address, an IPv6 client by its /64; anonymous and signed-in challenges are kept in
// books of their own), and taking it back with the browser's answer. Every refused answer is
// counted (window-limiter.ts says against whom) and logged with the member id only: never a challenge,
// a credential or a key. A missing or expired challenge is counted against nobody.
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server';
import type { Services } from '../../domain/context.ts';
import { newPasskeyId } from '../../domain/ids.ts';
import type { MemberRecord, PasskeyRecord } from '../../domain/model.ts';
import { memberPasskeys, passkeyOwner, recordPasskeyUse, savePasskey } from '../../domain/passkeys.ts';
import { authenticationOptions, CeremonyRefused, parseCredentialJson, registrationOptions, verifyAssertion, verifyRegistration } from './ceremonies.ts';
import { CHALLENGE_TTL_MS, ChallengeBook, ChallengeBookFull, MAX_OUTSTANDING, type ChallengePurpose } from './challenges.ts';
import { WindowLimiter, OPTIONS_LIMIT, type FailureKey } from './window-limiter.ts';
import type { RelyingParty } from './relying-party.ts';
import { limitedAddress } from '../client-address.ts';

export const PASSKEY_NAME_MAX = 60;

/** A refused proof, as the member is told (the log has the reason). */
export class ProofRefused extends Error {
  override readonly name = 'ProofRefused';
  constructor(
    message: string,
    /** Seconds to wait before trying again (rate limited), else 0. */
    readonly retryAfter = 0,
  ) {
    super(message);
  }
}

export interface Attempt {
  rp: RelyingParty;
  /** The session's CSRF token, or the sign-in form's pre-session cookie. */
  binding: string;
  address: string;
}

export class PasskeyFlows {
  /**
   * Two books, so anonymous sign-in ceremonies (anyone may start one) filling theirs never
   * refuse a signed-in member's registration or re-verification.
   */
  private readonly anonymousChallenges: ChallengeBook;
  private readonly memberChallenges: ChallengeBook;
  readonly failures: WindowLimiter;
  /** Ceremony options asked per address (each issues a challenge). */
  readonly options: WindowLimiter;

  constructor(
    private readonly services: Services,
    /** How many outstanding challenges a book holds (MAX_OUTSTANDING unless a test fills one). */
    { maxChallenges = MAX_OUTSTANDING }: { maxChallenges?: number } = {},
  ) {
    this.anonymousChallenges = new ChallengeBook(services.clock, CHALLENGE_TTL_MS, maxChallenges);
    this.memberChallenges = new ChallengeBook(services.clock, CHALLENGE_TTL_MS, maxChallenges);
    this.failures = new WindowLimiter(services.clock);
    this.options = new WindowLimiter(services.clock, { options: OPTIONS_LIMIT });
  }

  // ---- registration ------------------------------------------------------------------------

  async registrationStart(a: Attempt, member: Pick<MemberRecord, 'id' | 'email'>) {
    this.countOptions(a);
    const options = await registrationOptions(a.rp, member, await memberPasskeys(this.services, member.id));
    this.issue('register', a, options.challenge);
    return options;
  }

  /** Verifies the browser's answer and stores the passkey under the member. */
  async registrationFinish(a: Attempt, member: Pick<MemberRecord, 'id' | 'tenantId'>, name: string, raw: string | undefined): Promise<PasskeyRecord> {
    const keys = memberKeys(member.id);
    this.refuseWhenLimited(keys);
    const challenge = this.challenge('register', a);
    try {
      const credential = await verifyRegistration(a.rp, parseCredentialJson<RegistrationResponseJSON>(raw), challenge);
      const passkey: PasskeyRecord = { id: newPasskeyId(), tenantId: member.tenantId, memberId: member.id, name, ...credential, createdAt: this.services.clock.now(), lastUsedAt: null };
      if (!(await savePasskey(this.services, passkey))) throw new ProofRefused('This passkey is registered already. Nothing was added.');
      this.services.log.info({ memberId: member.id, passkeyId: passkey.id }, 'portal passkey added');
      return passkey;
    } catch (e) {
      throw this.refused(e, keys, { memberId: member.id }, 'The passkey could not be verified. Nothing was added; try again.');
    }
  }

  // ---- assertions: sign-in (any discoverable credential) and re-verification (the member's) ---

  async signInStart(a: Attempt) {
    this.countOptions(a);
    const options = await authenticationOptions(a.rp);
    this.issue('sign-in', a, options.challenge);
    return options;
  }

  async reverifyStart(a: Attempt, memberId: string) {
    this.countOptions(a);
    const options = await authenticationOptions(a.rp, await memberPasskeys(this.services, memberId));
    this.issue('reverify', a, options.challenge);
    return options;
  }

  /**
   * The active member whose passkey made this assertion, and the passkey (when re-verifying, the
   * member must be `expectedMemberId`). A deactivated member's passkey, another member's, or an
   * unknown one is refused like a bad signature. An anonymous sign-in's failures count against
   * its address only; a re-verification's against the signed-in member only.
   */
  async assertionFinish(
    a: Attempt,
    purpose: 'sign-in' | 'reverify',
    raw: string | undefined,
    expectedMemberId?: string,
  ): Promise<{ member: MemberRecord; passkey: PasskeyRecord }> {
    const keys = purpose === 'reverify' && expectedMemberId !== undefined ? memberKeys(expectedMemberId) : addressKeys(a);
    this.refuseWhenLimited(keys);
    const challenge = this.challenge(purpose, a);
    let ownerId: string | undefined;
    try {
      const response = parseCredentialJson<AuthenticationResponseJSON>(raw);
      const owner = await passkeyOwner(this.services, response.id);
      if (!owner) throw new CeremonyRefused('not-verified', 'no passkey of that credential id');
      ownerId = owner.member.id;
      if (expectedMemberId !== undefined && owner.member.id !== expectedMemberId) throw new CeremonyRefused('not-verified', 'the passkey of another member');
      if (!owner.member.active) throw new CeremonyRefused('not-verified', 'the member is inactive');
      const use = await verifyAssertion(a.rp, response, challenge, owner.passkey, { id: owner.member.id, identifiedBefore: expectedMemberId !== undefined });
      if (!(await recordPasskeyUse(this.services, owner.passkey, use))) throw new CeremonyRefused('lost-race', 'another use of the passkey was recorded first');
      return owner;
    } catch (e) {
      throw this.refused(e, keys, { purpose, memberId: expectedMemberId ?? ownerId }, 'The passkey could not be verified. Nothing was changed; try again.');
    }
  }

  // ---- shared ----------------------------------------------------------------------------

  refuseWhenLimited(keys: readonly FailureKey[]): void {
    const wait = this.failures.retryAfter(keys);
    if (wait > 0) throw new ProofRefused(`Too many failed attempts. Try again in ${Math.ceil(wait / 60)} minute(s).`, wait);
  }

  /** Every options request counts against its address (an IPv6 address's /64); past OPTIONS_LIMIT it is refused. */
  private countOptions(a: Attempt): void {
    const key = [{ kind: 'options', id: limitedAddress(a.address) }];
    const wait = this.options.retryAfter(key);
    if (wait > 0) throw new ProofRefused(`Too many passkey requests from this address. Try again in ${wait} second(s).`, wait);
    this.options.record(key);
  }

  private issue(purpose: ChallengePurpose, a: Attempt, challenge: string): void {
    try {
      this.bookOf(purpose).issue(purpose, a.binding, challenge);
    } catch (e) {
      if (e instanceof ChallengeBookFull) throw new ProofRefused('Too many passkey ceremonies are under way. Try again in a minute.', 60);
      throw e;
    }
  }

  private bookOf(purpose: ChallengePurpose): ChallengeBook {
    return purpose === 'sign-in' ? this.anonymousChallenges : this.memberChallenges;
  }

  /** The binding's challenge. A missing or expired one counts against nobody: anyone can send one. */
  private challenge(purpose: ChallengePurpose, a: Attempt): string {
    const challenge = this.bookOf(purpose).take(purpose, a.binding);
    if (challenge !== null) return challenge;
    throw new ProofRefused('The passkey request expired or was already used. Nothing was changed; try again.');
  }

  /** Counts and logs a refusal (a lost race is logged, not counted); answers what to throw. */
  private refused(e: unknown, keys: readonly FailureKey[], context: object, message: string): Error {
    if (e instanceof ProofRefused) return e;
    if (!(e instanceof CeremonyRefused)) return e as Error;
    const fields = { ...context, reason: e.reason, detail: e.message };
    if (e.reason === 'lost-race') {
      this.services.log.info(fields, 'portal passkey refused: another use of the passkey was recorded first');
      return new ProofRefused(message);
    }
    this.failures.record(keys);
    if (e.reason === 'counter-regressed') this.services.log.warn(fields, 'portal passkey refused: signature counter regressed (a cloned authenticator?)');
    else this.services.log.info(fields, 'portal passkey refused');
    return new ProofRefused(message);
  }
}

const memberKeys = (memberId: string): FailureKey[] => [{ kind: 'member', id: memberId }];
const addressKeys = (a: Attempt): FailureKey[] => [{ kind: 'address', id: limitedAddress(a.address) }];
