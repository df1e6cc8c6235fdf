// The portal's passkey flows over the ceremonies: issuing a challenge to a binding, and taking
// it back with the browser's answer. Every refusal is counted (per member and per address) and
// logged with the passkey and member ids only: never a challenge, a credential or a key.
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server';
import type { Services } from '../../domain/context.ts';
import { newPasskeyId } from '../../domain/ids.ts';
import type { MemberRecord, PasskeyRecord } from '../../domain/model.ts';
import { memberPasskeys, passkeyOwner, recordPasskeyUse, savePasskey } from '../../domain/passkeys.ts';
import { authenticationOptions, CeremonyRefused, parseCredentialJson, registrationOptions, verifyAssertion, verifyRegistration } from './ceremonies.ts';
import { ChallengeBook, type ChallengePurpose } from './challenges.ts';
import { FailureLimiter, type FailureKey } from './failures.ts';
import type { RelyingParty } from './relying-party.ts';

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
  readonly challenges: ChallengeBook;
  readonly failures: FailureLimiter;

  constructor(private readonly services: Services) {
    this.challenges = new ChallengeBook(services.clock);
    this.failures = new FailureLimiter(services.clock);
  }

  // ---- registration ------------------------------------------------------------------------

  async registrationStart(a: Attempt, member: Pick<MemberRecord, 'id' | 'email'>) {
    const options = await registrationOptions(a.rp, member, await memberPasskeys(this.services, member.id));
    this.challenges.issue('register', a.binding, options.challenge);
    return options;
  }

  /** Verifies the browser's answer and stores the passkey under the member. */
  async registrationFinish(a: Attempt, member: Pick<MemberRecord, 'id' | 'tenantId'>, name: string, raw: string | undefined): Promise<PasskeyRecord> {
    const keys = this.keys(a, member.id);
    this.refuseWhenLimited(keys);
    const challenge = this.challenge('register', a, keys);
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
    const options = await authenticationOptions(a.rp);
    this.challenges.issue('sign-in', a.binding, options.challenge);
    return options;
  }

  async reverifyStart(a: Attempt, memberId: string) {
    const options = await authenticationOptions(a.rp, await memberPasskeys(this.services, memberId));
    this.challenges.issue('reverify', a.binding, options.challenge);
    return options;
  }

  /**
   * The active member whose passkey made this assertion (and, when re-verifying, who must be
   * `expectedMemberId`). A deactivated member's passkey, another member's, or an unknown one is
   * refused like a bad signature.
   */
  async assertionFinish(a: Attempt, purpose: 'sign-in' | 'reverify', raw: string | undefined, expectedMemberId?: string): Promise<MemberRecord> {
    const early = expectedMemberId ? this.keys(a, expectedMemberId) : this.keys(a);
    this.refuseWhenLimited(early);
    const challenge = this.challenge(purpose, a, early);
    let keys = early;
    try {
      const response = parseCredentialJson<AuthenticationResponseJSON>(raw);
      const owner = await passkeyOwner(this.services, response.id);
      if (!owner) throw new CeremonyRefused('not-verified', 'no passkey of that credential id');
      keys = this.keys(a, owner.member.id);
      this.refuseWhenLimited(keys);
      if (expectedMemberId !== undefined && owner.member.id !== expectedMemberId) throw new CeremonyRefused('not-verified', 'the passkey of another member');
      if (!owner.member.active) throw new CeremonyRefused('not-verified', 'the member is inactive');
      const use = await verifyAssertion(a.rp, response, challenge, owner.passkey);
      if (!(await recordPasskeyUse(this.services, owner.passkey, use))) throw new CeremonyRefused('counter-regressed', 'another use of the passkey was recorded first');
      return owner.member;
    } catch (e) {
      throw this.refused(e, keys, { purpose }, 'The passkey could not be verified. Nothing was changed; try again.');
    }
  }

  // ---- shared ----------------------------------------------------------------------------

  private keys(a: Attempt, memberId?: string): FailureKey[] {
    return memberId ? [{ kind: 'address', id: a.address }, { kind: 'member', id: memberId }] : [{ kind: 'address', id: a.address }];
  }

  refuseWhenLimited(keys: readonly FailureKey[]): void {
    const wait = this.failures.retryAfter(keys);
    if (wait > 0) throw new ProofRefused(`Too many failed attempts. Try again in ${Math.ceil(wait / 60)} minute(s).`, wait);
  }

  private challenge(purpose: ChallengePurpose, a: Attempt, keys: readonly FailureKey[]): string {
    const challenge = this.challenges.take(purpose, a.binding);
    if (challenge !== null) return challenge;
    this.failures.fail(keys);
    throw new ProofRefused('The passkey request expired or was already used. Nothing was changed; try again.');
  }

  /** Counts and logs a refusal; answers what to throw. */
  private refused(e: unknown, keys: readonly FailureKey[], context: object, message: string): Error {
    if (e instanceof ProofRefused) return e;
    if (!(e instanceof CeremonyRefused)) return e as Error;
    this.failures.fail(keys);
    const member = keys.find((k) => k.kind === 'member')?.id;
    const fields = { ...context, memberId: member, reason: e.reason, detail: e.message };
    if (e.reason === 'counter-regressed') this.services.log.warn(fields, 'portal passkey refused: signature counter regressed (a cloned authenticator?)');
    else this.services.log.info(fields, 'portal passkey refused');
    return new ProofRefused(message);
  }
}
