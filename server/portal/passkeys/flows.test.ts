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
import { FAILURE_LIMITS, OPTIONS_LIMIT } from './window-limiter.ts';
import { PasskeyFlows, ProofRefused, type Attempt } from './flows.ts';
import { SoftAuthenticator } from './testing/soft-authenticator.ts';
import { generateKeyPairSync } from 'node:crypto';

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
    expect(signedIn.member.id).toBe(member.memberId);
    expect(signedIn.passkey.credentialId).toBe(auth.id);
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

  it('limits re-verification failures per member, and anonymous sign-in failures per address only', async () => {
    const flows = new PasskeyFlows(services);
    const { member, auth } = await memberWithPasskey(flows);
    const reverify = async (bend: Parameters<SoftAuthenticator['assert']>[1] = {}) => {
      const a = attempt();
      return flows.assertionFinish(a, 'reverify', JSON.stringify(auth.assert(await flows.reverifyStart(a, member.memberId), bend)), member.memberId);
    };
    for (let i = 0; i < FAILURE_LIMITS.member; i++) await refusal(reverify({ origin: 'https://evil.example' }));
    expect((await refusal(reverify())).retryAfter).toBeGreaterThan(0);

    // Anonymous sign-ins that fail with a member's credential id count against their address, never the member.
    const other = await memberWithPasskey(flows);
    const address = '203.0.113.9';
    for (let i = 0; i < FAILURE_LIMITS.address; i++) await refusal(signIn(flows, other.auth, attempt({ address }), { signer: generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey }));
    expect((await refusal(signIn(flows, other.auth, attempt({ address })))).retryAfter).toBeGreaterThan(0);
    expect((await signIn(flows, other.auth)).member.id).toBe(other.member.memberId);
  });

  it('counts a missing or expired challenge against nobody', async () => {
    const flows = new PasskeyFlows(services);
    const { auth } = await memberWithPasskey(flows);
    const address = '203.0.113.10';
    for (let i = 0; i < FAILURE_LIMITS.address * 5; i++) {
      expect((await refusal(flows.assertionFinish(attempt({ address }), 'sign-in', JSON.stringify({ id: auth.id, type: 'public-key', response: {} })))).message).toContain('expired');
    }
    expect(flows.failures.size).toBe(0);
    expect((await signIn(flows, auth, attempt({ address }))).passkey.credentialId).toBe(auth.id);
  });

  it('limits ceremony options per address, not across addresses', async () => {
    const flows = new PasskeyFlows(services);
    const address = '203.0.113.11';
    for (let i = 0; i < OPTIONS_LIMIT.limit; i++) await flows.signInStart(attempt({ address }));
    const limited = await refusal(flows.signInStart(attempt({ address })));
    expect(limited.retryAfter).toBeGreaterThan(0);
    expect(limited.retryAfter).toBeLessThanOrEqual(OPTIONS_LIMIT.windowMs / 1000);
    await flows.signInStart(attempt({ address: '203.0.113.12' }));
    clock.advance(OPTIONS_LIMIT.windowMs);
    await flows.signInStart(attempt({ address }));
  });

  it('registers and signs in under a single-label RP ID (an intranet host such as https://portal)', async () => {
    const flows = new PasskeyFlows(services);
    const rp = { origin: 'https://portal', rpId: 'portal' };
    const t = await server.newTenant();
    const member = await createMember(services, { tenantId: t.tenantId, email: 'intranet@merchant.example', role: 'developer' });
    const auth = new SoftAuthenticator(rp.origin, rp.rpId);
    const a = attempt({ rp });
    const options = await flows.registrationStart(a, { id: member.memberId, email: 'intranet@merchant.example' });
    expect(options.rp.id).toBe('portal');
    await flows.registrationFinish(a, { id: member.memberId, tenantId: t.tenantId }, 'Laptop', JSON.stringify(auth.register(options)));
    const signIn = attempt({ rp });
    const assertion = auth.assert(await flows.signInStart(signIn));
    expect((await flows.assertionFinish(signIn, 'sign-in', JSON.stringify(assertion))).member.id).toBe(member.memberId);
  });

  it('limits options per IPv6 /64: many addresses of one /64 share one limit, another /64 has its own', async () => {
    const flows = new PasskeyFlows(services);
    // The same /64, written as a client or a proxy may write it.
    const ofOne = (i: number) => [`2001:db8:7:1::${i.toString(16)}`, `2001:0db8:0007:0001:${i.toString(16)}:0:0:1`, `2001:db8:7:1:ffff:${i.toString(16)}::`][i % 3]!;
    for (let i = 1; i <= OPTIONS_LIMIT.limit; i++) await flows.signInStart(attempt({ address: ofOne(i) }));
    expect((await refusal(flows.signInStart(attempt({ address: ofOne(1000) })))).retryAfter).toBeGreaterThan(0);
    expect((await refusal(flows.reverifyStart(attempt({ address: '2001:db8:7:1:abcd::9' }), 'mem_x'))).retryAfter).toBeGreaterThan(0);
    await flows.signInStart(attempt({ address: '2001:db8:7:2::1' }));
  });

  it('limits failed sign-ins per IPv6 /64 too', async () => {
    const flows = new PasskeyFlows(services);
    const { auth } = await memberWithPasskey(flows);
    const forged = { signer: generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey };
    for (let i = 1; i <= FAILURE_LIMITS.address; i++) await refusal(signIn(flows, auth, attempt({ address: `2001:db8:9:1::${i}` }), forged));
    expect((await refusal(signIn(flows, auth, attempt({ address: '2001:db8:9:1:1:2:3:4' })))).retryAfter).toBeGreaterThan(0);
    expect((await signIn(flows, auth, attempt({ address: '2001:db8:9:2::1' }))).passkey.credentialId).toBe(auth.id);
  });

  it('keeps anonymous and signed-in challenges apart: anonymous ones filling up refuse no signed-in member’s', async () => {
    const flows = new PasskeyFlows(services, { maxChallenges: 3 });
    const { member } = await memberWithPasskey(flows);
    for (let i = 0; i < 3; i++) await flows.signInStart(attempt());
    expect((await refusal(flows.signInStart(attempt()))).message).toContain('Too many passkey ceremonies');
    await flows.reverifyStart(attempt(), member.memberId);
    await flows.registrationStart(attempt(), { id: member.memberId, email: 'dev@merchant.example' });
  });

  it('verifies the signature before the counter: a forged assertion with an old counter is not taken for a clone', async () => {
    const flows = new PasskeyFlows(services);
    const { auth } = await memberWithPasskey(flows);
    await signIn(flows, auth, attempt(), { counter: 9 });
    const before = logged.length;
    const forger = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
    await refusal(signIn(flows, auth, attempt(), { counter: 2, signer: forger }));
    const lines = logged.slice(before).join('');
    expect(lines).toContain('"reason":"not-verified"');
    expect(lines).not.toContain('counter regressed');
  });

  it('gives a lost compare-and-swap its own reason, logged and counted against nobody', async () => {
    const { auth, passkey } = await memberWithPasskey(new PasskeyFlows(services));
    // Another sign-in records a use of the passkey between this one's read and its write.
    let raced = false;
    const transaction: Services['store']['transaction'] = async (fn) => {
      if (!raced) {
        raced = true;
        await services.store.transaction((tx) => tx.passkeys.recordUse(passkey.id, { seenCounter: 0, counter: 50, backedUp: false, at: clock.now() }));
      }
      return services.store.transaction(fn);
    };
    const store = new Proxy(services.store, { get: (target, prop) => (prop === 'transaction' ? transaction : Reflect.get(target, prop, target)) });
    const flows = new PasskeyFlows({ ...services, store });
    const before = logged.length;
    await refusal(signIn(flows, auth));
    const lines = logged.slice(before).join('');
    expect(lines).toContain('"reason":"lost-race"');
    expect(lines).not.toContain('counter regressed');
    expect(flows.failures.size).toBe(0);
  });

  it('checks the userHandle against the passkey’s owner, and requires it when signing in', async () => {
    const flows = new PasskeyFlows(services);
    const { member, auth } = await memberWithPasskey(flows);
    const another = Buffer.from('mem_another_member').toString('base64url');
    await refusal(signIn(flows, auth, attempt(), { userHandle: another }));
    await refusal(signIn(flows, auth, attempt(), { userHandle: null }));
    // Re-verification identified the member before the ceremony: no userHandle is fine, a wrong one is not.
    const a = attempt();
    await flows.assertionFinish(a, 'reverify', JSON.stringify(auth.assert(await flows.reverifyStart(a, member.memberId), { userHandle: null })), member.memberId);
    const b = attempt();
    await refusal(flows.assertionFinish(b, 'reverify', JSON.stringify(auth.assert(await flows.reverifyStart(b, member.memberId), { userHandle: another })), member.memberId));
    expect((await signIn(flows, auth)).member.id).toBe(member.memberId);
  });

  it('requires user verification when registering and when asserting', async () => {
    const flows = new PasskeyFlows(services);
    const { auth } = await memberWithPasskey(flows);
    const before = logged.length;
    await refusal(signIn(flows, auth, attempt(), { userVerified: false }));
    expect(logged.slice(before).join('')).toContain('"reason":"not-verified"');
    const t = await server.newTenant();
    const member = await createMember(services, { tenantId: t.tenantId, email: 'uv@merchant.example', role: 'developer' });
    const unverified = new SoftAuthenticator(RP.origin, RP.rpId);
    const a = attempt();
    const options = await flows.registrationStart(a, { id: member.memberId, email: 'uv@merchant.example' });
    await refusal(flows.registrationFinish(a, { id: member.memberId, tenantId: t.tenantId }, 'No UV', JSON.stringify(unverified.register(options, { userVerified: false }))));
    expect(await memberPasskeys(services, member.memberId)).toEqual([]);
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
