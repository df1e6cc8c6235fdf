// The two WebAuthn ceremonies, by @simplewebauthn/server: discoverable credentials, user
// verification required, attestation `none`; origin, RP ID, challenge, user verification and
// signature are checked by the library, then the counter and the userHandle on the verified
// assertion. Nothing here parses CBOR or COSE by hand.
import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type AuthenticationResponseJSON,
  type AuthenticatorTransport,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type RegistrationResponseJSON,
} from '@simplewebauthn/server';
import { isoBase64URL } from '@simplewebauthn/server/helpers';
import type { PasskeyRecord } from '../../domain/model.ts';
import { CHALLENGE_TTL_MS } from './challenges.ts';
import type { RelyingParty } from './relying-party.ts';

export const RP_NAME = 'Payments developer portal';

/** The verified credential of a registration, ready to be stored. */
export type NewCredential = Pick<PasskeyRecord, 'credentialId' | 'publicKey' | 'counter' | 'transports' | 'multiDevice' | 'backedUp'>;

/**
 * Why a ceremony's response was refused. `counter-regressed` (a verified assertion whose counter
 * did not grow) may mean a cloned authenticator; `lost-race` is a verified assertion whose use
 * another request recorded first (two sign-ins at once), which is nobody's failure.
 */
export class CeremonyRefused extends Error {
  override readonly name = 'CeremonyRefused';
  constructor(
    readonly reason: 'malformed' | 'not-verified' | 'counter-regressed' | 'lost-race',
    message: string,
  ) {
    super(message);
  }
}

export function registrationOptions(
  rp: RelyingParty,
  member: { id: string; email: string },
  existing: readonly PasskeyRecord[],
): Promise<PublicKeyCredentialCreationOptionsJSON> {
  return generateRegistrationOptions({
    rpName: RP_NAME,
    rpID: rp.rpId,
    userName: member.email,
    userDisplayName: member.email,
    userID: new TextEncoder().encode(member.id),
    timeout: CHALLENGE_TTL_MS,
    attestationType: 'none',
    excludeCredentials: existing.map((p) => ({ id: p.credentialId, transports: p.transports as AuthenticatorTransport[] })),
    authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
  });
}

export async function verifyRegistration(rp: RelyingParty, response: RegistrationResponseJSON, expectedChallenge: string): Promise<NewCredential> {
  const result = await verifying(() =>
    verifyRegistrationResponse({ response, expectedChallenge, expectedOrigin: rp.origin, expectedRPID: rp.rpId, requireUserVerification: true }),
  );
  if (!result.verified || !result.registrationInfo) throw new CeremonyRefused('not-verified', 'the registration did not verify');
  const { credential, credentialDeviceType, credentialBackedUp } = result.registrationInfo;
  return {
    credentialId: credential.id,
    publicKey: isoBase64URL.fromBuffer(credential.publicKey),
    counter: credential.counter,
    transports: credential.transports ?? [],
    multiDevice: credentialDeviceType === 'multiDevice',
    backedUp: credentialBackedUp,
  };
}

/** Options for an assertion: any discoverable credential (sign-in), or one of `allowed` (re-verification). */
export function authenticationOptions(rp: RelyingParty, allowed: readonly PasskeyRecord[] = []): Promise<PublicKeyCredentialRequestOptionsJSON> {
  return generateAuthenticationOptions({
    rpID: rp.rpId,
    timeout: CHALLENGE_TTL_MS,
    userVerification: 'required',
    allowCredentials: allowed.map((p) => ({ id: p.credentialId, transports: p.transports as AuthenticatorTransport[] })),
  });
}

/**
 * Verifies an assertion of `passkey`, owned by `ownerId`, in the library's order: origin, RP ID,
 * challenge, user presence and verification, signature. Only then the counter, on the verified
 * value (the library would compare it before the signature, so a forged assertion could pass for
 * a cloned authenticator), and the userHandle, which must name the owner (WebAuthn §7.2 step 6).
 * Answers the counter and backup state to record.
 */
export async function verifyAssertion(
  rp: RelyingParty,
  response: AuthenticationResponseJSON,
  expectedChallenge: string,
  passkey: PasskeyRecord,
  owner: { id: string; identifiedBefore: boolean },
): Promise<{ counter: number; backedUp: boolean }> {
  const result = await verifying(() =>
    verifyAuthenticationResponse({
      response,
      expectedChallenge,
      expectedOrigin: rp.origin,
      expectedRPID: rp.rpId,
      requireUserVerification: true,
      // The stored counter is compared below, once the signature is known to be good.
      credential: { id: passkey.credentialId, publicKey: isoBase64URL.toBuffer(passkey.publicKey), counter: 0, transports: passkey.transports as AuthenticatorTransport[] },
    }),
  );
  if (!result.verified) throw new CeremonyRefused('not-verified', 'the assertion did not verify');
  const { newCounter, credentialBackedUp } = result.authenticationInfo;
  if ((newCounter > 0 || passkey.counter > 0) && newCounter <= passkey.counter) {
    throw new CeremonyRefused('counter-regressed', `signature counter ${newCounter} is not above the stored ${passkey.counter}`);
  }
  if (!userHandleNames(response, owner)) throw new CeremonyRefused('not-verified', 'the userHandle names another user than the passkey’s owner');
  return { counter: newCounter, backedUp: credentialBackedUp };
}

/**
 * The assertion's userHandle (the user.id given at registration: the member id's bytes) is the
 * owner's; it must be there unless the member was identified before the ceremony (re-verification).
 */
function userHandleNames(response: AuthenticationResponseJSON, owner: { id: string; identifiedBefore: boolean }): boolean {
  const handle = response.response.userHandle;
  if (handle === undefined || handle === null || handle === '') return owner.identifiedBefore;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(isoBase64URL.toBuffer(handle)) === owner.id;
  } catch {
    return false;
  }
}

/**
 * The library throws on every failed check: one refusal, its message kept for the log with every
 * quoted value blanked (the library quotes challenges and origins it compared).
 */
async function verifying<T>(verify: () => Promise<T>): Promise<T> {
  try {
    return await verify();
  } catch (e) {
    throw new CeremonyRefused('not-verified', (e as Error).message.replace(/"[^"]*"/g, '"…"'));
  }
}

/** A browser's JSON answer, parsed and shaped enough to hand to the library (which checks the rest). */
export function parseCredentialJson<T extends RegistrationResponseJSON | AuthenticationResponseJSON>(raw: string | undefined): T {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw ?? '');
  } catch {
    throw new CeremonyRefused('malformed', 'the credential is not JSON');
  }
  const p = parsed as { id?: unknown; rawId?: unknown; type?: unknown; response?: unknown };
  if (typeof p !== 'object' || p === null || typeof p.id !== 'string' || p.type !== 'public-key' || typeof p.response !== 'object' || p.response === null) {
    throw new CeremonyRefused('malformed', 'the credential lacks id, type or response');
  }
  return parsed as T;
}
