// The two WebAuthn ceremonies, by @simplewebauthn/server: discoverable credentials, user
// verification required, attestation `none`; origin, RP ID, challenge, signature and counter
// are all checked by the library. Nothing here parses CBOR or COSE by hand.
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
import { isoBase64URL, parseAuthenticatorData } from '@simplewebauthn/server/helpers';
import type { PasskeyRecord } from '../../domain/model.ts';
import { CHALLENGE_TTL_MS } from './challenges.ts';
import type { RelyingParty } from './relying-party.ts';

export const RP_NAME = 'Payments developer portal';

/** The verified credential of a registration, ready to be stored. */
export type NewCredential = Pick<PasskeyRecord, 'credentialId' | 'publicKey' | 'counter' | 'transports' | 'multiDevice' | 'backedUp'>;

/** Why a ceremony's response was refused; `counter-regressed` may mean a cloned authenticator. */
export class CeremonyRefused extends Error {
  override readonly name = 'CeremonyRefused';
  constructor(
    readonly reason: 'malformed' | 'not-verified' | 'counter-regressed',
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

/** Verifies an assertion of `passkey`; answers the counter and backup state to record. */
export async function verifyAssertion(
  rp: RelyingParty,
  response: AuthenticationResponseJSON,
  expectedChallenge: string,
  passkey: PasskeyRecord,
): Promise<{ counter: number; backedUp: boolean }> {
  if (counterRegressed(response, passkey.counter)) {
    throw new CeremonyRefused('counter-regressed', `signature counter ${assertedCounter(response)} is not above the stored ${passkey.counter}`);
  }
  const result = await verifying(() =>
    verifyAuthenticationResponse({
      response,
      expectedChallenge,
      expectedOrigin: rp.origin,
      expectedRPID: rp.rpId,
      requireUserVerification: true,
      credential: {
        id: passkey.credentialId,
        publicKey: isoBase64URL.toBuffer(passkey.publicKey),
        counter: passkey.counter,
        transports: passkey.transports as AuthenticatorTransport[],
      },
    }),
  );
  if (!result.verified) throw new CeremonyRefused('not-verified', 'the assertion did not verify');
  return { counter: result.authenticationInfo.newCounter, backedUp: result.authenticationInfo.credentialBackedUp };
}

/** The library's own rule (a counter in use must grow), asked first so a regression is told apart. */
function counterRegressed(response: AuthenticationResponseJSON, stored: number): boolean {
  const counter = assertedCounter(response);
  return counter !== null && (counter > 0 || stored > 0) && counter <= stored;
}

function assertedCounter(response: AuthenticationResponseJSON): number | null {
  try {
    return parseAuthenticatorData(isoBase64URL.toBuffer(response.response.authenticatorData)).counter;
  } catch {
    return null;
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
