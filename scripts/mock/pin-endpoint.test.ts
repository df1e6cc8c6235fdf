// pinEndpoint, the stateful mock's MOCK_ENDPOINT_URL + MOCK_ENDPOINT_SECRET: the environment
// ends with one active endpoint at the URL whose sealed secret opens to the pinned one; what
// changes is saved as the API saves it (a new version for a secret or a URL), nothing when all
// is as pinned; the URL passes the save-time destination checks.
import { randomBytes } from 'node:crypto';
import { pino } from 'pino';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { generateSecret } from '../../signing/signature.ts';
import { openTestStore } from '../../server/testing/store.ts';
import { createDestinationPolicy } from '../../server/destination/policy.ts';
import { createTenant } from '../../server/domain/admin.ts';
import { ManualClock } from '../../server/domain/clock.ts';
import type { Scope, Services } from '../../server/domain/context.ts';
import { isAppError } from '../../server/domain/errors.ts';
import { createSecretBox } from '../../server/domain/secrets.ts';
import type { Store } from '../../server/domain/store.ts';
import * as endpointsDomain from '../../server/domain/endpoints/endpoints.ts';
import { pinEndpoint } from './pin-endpoint.ts';

const { createEndpoint, listEndpoints } = endpointsDomain;

const URL_A = 'http://127.0.0.1:3000/webhooks';
const URL_B = 'http://127.0.0.1:3001/hooks';

let store: Store;
let services: Services;
let scope: Scope;
beforeEach(async () => {
  store = await openTestStore();
  services = {
    store,
    clock: new ManualClock(),
    secrets: createSecretBox(randomBytes(32)),
    destinations: createDestinationPolicy({ allowInsecure: true, nodeEnv: 'test' }),
    log: pino({ level: 'silent' }),
  };
  const { tenantId } = await createTenant(services, { name: 'Pinned' });
  const env = await store.read((tx) => tx.tenants.findEnvironment(tenantId, 'test'));
  scope = { tenantId, environmentId: env!.id, environment: 'test' };
});
afterEach(async () => {
  await store.close();
});

/** The active endpoints: URL, version, scheme and the secret their sealed one opens to. */
async function active(): Promise<Array<[string, number, string, string]>> {
  return (await listEndpoints(services, scope)).filter((v) => v.endpoint.active).map(({ endpoint: e }) => [e.url, e.version, e.signatureScheme, services.secrets.open(e.secretEnc)]);
}

it('creates the endpoint when there is none, then keeps it as it is when pinned again', async () => {
  const secret = generateSecret();
  const first = await pinEndpoint(services, scope, { url: URL_A, secret });
  expect(first.outcome).toBe('created');
  expect(first.endpoint.secretEnc).not.toContain(secret.slice('whsec_'.length));
  expect(await active()).toEqual([[URL_A, 1, 'service-signature', secret]]);
  expect((await pinEndpoint(services, scope, { url: URL_A, secret })).outcome).toBe('kept');
  expect(await active()).toEqual([[URL_A, 1, 'service-signature', secret]]);
});

it('sets the secret of the active endpoint at the URL (a new version), and a scheme given without a new version', async () => {
  await createEndpoint(services, scope, { url: URL_A });
  const secret = generateSecret();
  expect((await pinEndpoint(services, scope, { url: URL_A, secret })).outcome).toBe('updated');
  expect(await active()).toEqual([[URL_A, 2, 'service-signature', secret]]);
  expect((await pinEndpoint(services, scope, { url: URL_A, secret, signatureScheme: 'standard-webhooks' })).outcome).toBe('updated');
  expect(await active()).toEqual([[URL_A, 2, 'standard-webhooks', secret]]);
});

it('moves the active endpoint at another URL to the pinned one, with the pinned secret', async () => {
  const other = await createEndpoint(services, scope, { url: URL_B });
  const secret = generateSecret();
  const pinned = await pinEndpoint(services, scope, { url: URL_A, secret });
  expect([pinned.outcome, pinned.previousUrl, pinned.endpoint.id]).toEqual(['moved', URL_B, other.endpoint.id]);
  expect(await active()).toEqual([[URL_A, 2, 'service-signature', secret]]);
});

it('refuses a URL the destination checks refuse, naming the field, and writes nothing', async () => {
  const refused = await pinEndpoint(services, scope, { url: 'http://10.0.0.1/hooks', secret: generateSecret(), field: 'MOCK_ENDPOINT_URL' }).catch((e: unknown) => e);
  expect(isAppError(refused) && [refused.slug, refused.detail]).toEqual(['destination-not-allowed', expect.stringMatching(/^MOCK_ENDPOINT_URL is not an allowed destination: 10\.0\.0\.1 is a private network address/)]);
  expect(await active()).toEqual([]);
});

it('is the mock\'s alone: the production domain exports no way to choose a signing secret', () => {
  expect(Object.keys(endpointsDomain)).not.toContain('pinEndpoint');
});
