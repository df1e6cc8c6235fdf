// The passkey ceremonies end to end at the flow level, verified by @simplewebauthn/server itself
// against answers of a software authenticator (real ES256 signatures, attestation `none`): each
// security property of issue 49 in turn, on the real store.
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMember, setMemberActive } from '../../domain/admin.ts';
import { ManualClock } from '../../domain/clock.ts';
import type { Services } from '../../domain/context.ts';
import { memberPasskeys } from '../../domain/passkeys.ts';
import { startTestServer, type TestServer } from '../../testing/harness.ts';
import { CHALLENGE_TTL_MS } from './challenges.ts';
import { FAILURE_LIMITS } from './failures.ts';
import { PasskeyFlows, ProofRefused, type Attempt } from './flows.ts';
import { SoftAuthenticator } from './testing/soft-authenticator.ts';

const clock = new ManualClock(Date.UTC(2026, 10, 22, 9, 0, 0));
const RP = { origin: 'https://portal.merchant.example', rpId: 'portal.merchant.example' };
let server: TestServer;
let services: Services;
const logged: string[] = [];
let addressCounter = 0;

beforeAll(async () => {
  server = await startTestServer({ clock });
  const sink = new Writable({ write: (chunk: Buffer, _enc, done) => (logged.push(chunk.toString()), done()) });
  services = { ...server.services, log: pino({ level: 'debug' }, sink) };
});
afterAll(() => server?.close());

/** A fresh binding and address per attempt, so limits of one case never reach another. */
const attempt = (o: Partial<Attempt> = {}): Attempt => ({ rp: RP, binding: `binding-${++addressCounter}`, address: `198.51.100.${addressCounter % 250}`, ...o });

async function memberWithPasskey(flows: PasskeyFlows) {
  const t = await server.newTenant();
  const member = await createMember(services, { tenantId: t.tenantId, email: 'dev@merchant.example', role: 'developer' });
  const auth = new SoftAuthenticator(RP.origin, RP.rpId);
  const a = attempt();
  const options = await flows.registrationStart(a, { id: member.memberId, email: 'dev@merchant.example' });
  expect(options.authenticatorSelection).toMatchObject({ residentKey: 'required', userVerification: 'required' });
  expect(options.attestation).toBe('none');
  const passkey = await flows.registrationFinish(a, { id: member.memberId, tenantId: t.tenantId }, 'Laptop', JSON.stringify(auth.register(options)));
  return { t, member, auth, passkey };
}

async function signIn(flows: PasskeyFlows, auth: SoftAuthenticator, a = attempt(), bend: Parameters<SoftAuthenticator['assert']>[1] = {}) {
  const options = await flows.signInStart(a);
  return flows.assertionFinish(a, 'sign-in', JSON.stringify(auth.assert(options, bend)));
}

const refusal = (p: Promise<unknown>) => p.then(() => expect.fail('accepted'), (e: unknown) => (expect(e).toBeInstanceOf(ProofRefused), e as ProofRefused));

describe('passkey ceremonies', () => {
  it('registers a discoverable passkey and signs its member in with it, recording counter and last use', async () => {
    const flows = new PasskeyFlows(services);
    const { member, auth, passkey } = await memberWithPasskey(flows);
    expect(passkey).toMatchObject({ memberId: member.memberId, credentialId: auth.id, counter: 0, transports: ['internal'], name: 'Laptop' });
    const signedIn = await signIn(flows, auth);
    expect(signedIn.id).toBe(member.memberId);
    const [stored] = await memberPasskeys(services, member.memberId);
    expect(stored).toMatchObject({ counter: 1, lastUsedAt: clock.now() });
  });

  it('takes a challenge once, only for its binding, and not after two minutes', async () => {
    const flows = new PasskeyFlows(services);
    const { auth } = await memberWithPasskey(flows);
    const a = attempt();
    const answer = JSON.stringify(auth.assert(await flows.signInStart(a)));
    await flows.assertionFinish(a, 'sign-in', answer);
    expect((await refusal(flows.assertionFinish(a, 'sign-in', answer))).message).toContain('expired or was already used');

    const b = attempt();
    const other = JSON.stringify(auth.assert(await flows.signInStart(b)));
    expect((await refusal(flows.assertionFinish({ ...b, binding: 'another-session' }, 'sign-in', other))).message).toContain('expired or was already used');

    const c = attempt();
    const late = JSON.stringify(auth.assert(await flows.signInStart(c)));
    clock.advance(CHALLENGE_TTL_MS + 1);
    expect((await refusal(flows.assertionFinish(c, 'sign-in', late))).message).toContain('expired or was already used');
  });

  it('checks the origin and the RP ID', async () => {
    const flows = new PasskeyFlows(services);
    const { auth } = await memberWithPasskey(flows);
    await refusal(signIn(flows, auth, attempt(), { origin: 'https://portal.phishing.example' }));
    await refusal(signIn(flows, auth, attempt(), { rpId: 'phishing.example' }));
    const wrongOrigin = new SoftAuthenticator('https://evil.example', RP.rpId);
    const a = attempt();
    const options = await flows.registrationStart(a, { id: 'mem_x', email: 'x@merchant.example' });
    await refusal(flows.registrationFinish(a, { id: 'mem_x', tenantId: 'ten_x' }, 'Evil', JSON.stringify(wrongOrigin.register(options))));
  });

  it('refuses and logs a signature counter that did not grow', async () => {
    const flows = new PasskeyFlows(services);
    const { auth, passkey } = await memberWithPasskey(flows);
    await signIn(flows, auth, attempt(), { counter: 7 });
    await refusal(signIn(flows, auth, attempt(), { counter: 7 }));
    await refusal(signIn(flows, auth, attempt(), { counter: 3 }));
    expect(logged.join('')).toContain('signature counter regressed');
    expect((await memberPasskeys(services, passkey.memberId))[0]?.counter).toBe(7);
  });

  it('confirms a member only with their own passkey, and refuses a deactivated member’s at once', async () => {
    const flows = new PasskeyFlows(services);
    const { t, member, auth } = await memberWithPasskey(flows);
    const a = attempt();
    const options = await flows.reverifyStart(a, 'mem_someone_else');
    await refusal(flows.assertionFinish(a, 'reverify', JSON.stringify(auth.assert(options)), 'mem_someone_else'));
    await setMemberActive(services, { tenantId: t.tenantId, memberId: member.memberId, active: false });
    await refusal(signIn(flows, auth));
  });

  it('refuses a credential id registered already, to another member of another tenant', async () => {
    const flows = new PasskeyFlows(services);
    const { auth } = await memberWithPasskey(flows);
    const other = await server.newTenant();
    const a = attempt();
    const options = await flows.registrationStart(a, { id: 'mem_other', email: 'o@other.example' });
    const error = await refusal(flows.registrationFinish(a, { id: 'mem_other', tenantId: other.tenantId }, 'Copy', JSON.stringify(auth.register(options))));
    expect(error.message).toContain('registered already');
  });

  it('limits failures per member and per address', async () => {
    const flows = new PasskeyFlows(services);
    const { auth } = await memberWithPasskey(flows);
    for (let i = 0; i < FAILURE_LIMITS.member; i++) await refusal(signIn(flows, auth, attempt(), { origin: 'https://evil.example' }));
    const limited = await refusal(signIn(flows, auth));
    expect(limited.retryAfter).toBeGreaterThan(0);

    const address = '203.0.113.9';
    for (let i = 0; i < FAILURE_LIMITS.address; i++) await refusal(flows.assertionFinish(attempt({ address }), 'sign-in', '{"not":"a credential"}'));
    const fresh = await memberWithPasskey(flows);
    expect((await refusal(signIn(flows, fresh.auth, attempt({ address })))).retryAfter).toBeGreaterThan(0);
  });

  it('logs no challenge, credential or key', async () => {
    const flows = new PasskeyFlows(services);
    const { auth } = await memberWithPasskey(flows);
    const a = attempt();
    const options = await flows.signInStart(a);
    await refusal(flows.assertionFinish(a, 'sign-in', JSON.stringify(auth.assert(options, { origin: 'https://evil.example' }))));
    const text = logged.join('');
    expect(text).toContain('portal passkey refused');
    expect(text).not.toContain(options.challenge);
    expect(text).not.toContain(auth.id);
  });
});
