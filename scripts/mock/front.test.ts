// Prism's request violations, should any reach the front past the server's validator, become
// the contract's field issues; its response violations and anything unreadable are not the
// client's error.
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { beforeAll, describe, expect, it } from 'vitest';
import { API_NAMES, type ApiName } from '../../server/contract/operations.ts';
import { generateSecret } from '../../signing/signature.ts';
import { createMockFront, mockedApi, requestViolations } from './front.ts';
import type { PrismEngine } from './prism.ts';
import { createMockSender } from './webhooks.ts';

describe('requestViolations', () => {
  it('turns sl-violations locations into the pointers of 400 validation-failed', () => {
    const violations = [
      { location: ['request', 'body', 'thirdPartyId'], severity: 'Error', code: 'required', message: "Request body must have required property 'thirdPartyId'" },
      { location: ['request', 'query', 'limit'], severity: 'Error', code: 'maximum', message: 'must be <= 100' },
      { location: ['request', 'body', 'items', '0', 'amount'], severity: 'Error', code: 'type', message: 'must be number' },
      { location: ['response', 'body', 'id'], severity: 'Error', code: 'pattern', message: 'must match pattern' },
      { location: ['request', 'body', 'extra'], severity: 'Warning', code: 'x', message: 'a warning' },
      { location: ['request'], severity: 'Error', code: 401, message: 'Invalid security scheme used' },
    ];
    expect(requestViolations(violations)).toEqual([
      { pointer: '/body/thirdPartyId', detail: "Request body must have required property 'thirdPartyId'" },
      { pointer: '/query/limit', detail: 'must be <= 100' },
      { pointer: '/body/items/0/amount', detail: 'must be number' },
    ]);
  });

  it('finds nothing in an empty list', () => {
    expect(requestViolations([])).toEqual([]);
  });
});

// Each operation goes to the Prism of its own document, as the documents' paths say: stand-ins
// answer with the name of the document they stand for.
describe('the front routes each operation to its document', () => {
  const standIn = (api: ApiName): PrismEngine => ({ answer: async () => ({ status: 200, headers: { 'content-type': 'application/json' }, body: { api }, violations: [] }) });
  let front: ServerType;
  let base = '';

  beforeAll(async () => {
    const sender = createMockSender();
    const app = createMockFront({
      apis: API_NAMES.map((api) => mockedApi(api)),
      prism: standIn,
      selfUrl: () => base,
      webhookSecret: generateSecret(),
      callbackSecret: generateSecret(),
      sender,
    });
    front = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' });
    await new Promise((resolve) => front.once('listening', resolve));
    base = `http://127.0.0.1:${(front.address() as AddressInfo).port}`;
    return async () => {
      await sender.close();
      await new Promise((resolve) => front.close(resolve));
    };
  });

  it.each([
    ['/v2/orders/3f0c9a8e-6b1d-4c2e-9f7a-2d5b8e1c4a90', 'orders'],
    ['/v2/webhooks/endpoints', 'management'],
    ['/sandbox/wallet', 'sandbox'],
    ['/transactions/users?userId=u-1', 'transactions'],
  ])('GET %s goes to the Prism of %s', async (path, api) => {
    const res = await fetch(`${base}${path}`, { headers: { 'x-api-key': 'pk_test_front', 'x-api-hash': 'sk_test_front' } });
    expect(await res.json()).toEqual({ api });
  });
});
