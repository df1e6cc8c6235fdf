import { expect, it } from 'vitest';
import { createOrderLabels } from './order-label.ts';

it('labels an operational event by its endpoint and reason, without asking the service (issue 69)', async () => {
  const refuse = (() => Promise.reject(new Error('no request expected'))) as typeof fetch;
  const label = createOrderLabels({ baseUrl: 'http://127.0.0.1:9', apiKey: 'pk_test_x', apiSecret: 'x' }, refuse);
  const body = (data: object) => JSON.stringify({ id: 'a'.repeat(64), type: 'webhook_endpoint.disabled', data });
  expect(await label(body({ endpointId: 'whe_01', reason: 'gone' }))).toBe('whe_01 (gone)');
  expect(await label(body({ endpointId: 'whe_02' }))).toBe('whe_02');
  expect(await label(JSON.stringify({ type: 'webhook.test', data: { environment: 'test' } }))).toBe('-');
});
