// trigger's data: the event's example from the generated AsyncAPI document, overridden by
// --data and --set, checked against the event's data schema from the same document.
import { expect, it } from 'vitest';
import webhooks from '../../generated/asyncapi/webhooks.bundled.json' with { type: 'json' };
import { UsageError } from './args.ts';
import { triggerData } from './trigger-data.ts';

const exampleOf = (type: string): Record<string, unknown> =>
  Object.values(webhooks.components.messages as Record<string, { examples: Array<{ payload: { type?: string; data?: Record<string, unknown> } }> }>)
    .flatMap((m) => m.examples)
    .find((e) => e.payload.type === type)!.payload.data!;

it('starts from the event example and applies --data, then each --set (JSON values, else text)', () => {
  const { data, changed } = triggerData({
    event: 'order.paid',
    data: '{"amountMinor":1250,"amountBaseUnits":"12500000"}',
    sets: [
      { path: 'data.merchantReference', value: 'cart-42' },
      { path: 'amountMinor', value: '1300' },
      { path: 'data.networkId', value: '123' },
    ],
  });
  expect(data).toEqual({ ...exampleOf('order.paid'), amountMinor: 1300, amountBaseUnits: '12500000', merchantReference: 'cart-42', networkId: '123' });
  expect(changed.sort()).toEqual(['amountBaseUnits', 'amountMinor', 'merchantReference', 'networkId']);
});

it('refuses data that does not match the event schema, saying where', () => {
  expect(() => triggerData({ event: 'order.created', data: null, sets: [{ path: 'data.amountMinor', value: '12.5' }] })).toThrow(
    /the data does not match order\.created's schema: data\/amountMinor .*integer/,
  );
  // A decimal string field takes the text as it is: "-5" is not a base-unit amount.
  expect(() => triggerData({ event: 'order.created', data: null, sets: [{ path: 'data.amountBaseUnits', value: '-5' }] })).toThrow(/data\/amountBaseUnits .*pattern/);
  expect(() => triggerData({ event: 'order.created', data: null, sets: [{ path: 'data.assetId', value: 'X'.repeat(65) }] })).toThrow(UsageError);
});

it('refuses fields the service sets, bad JSON and nested paths', () => {
  expect(() => triggerData({ event: 'order.created', data: null, sets: [{ path: 'data.status', value: 'paid' }] })).toThrow(
    'data.status is set by the service, not by trigger; order.created takes merchantReference, amountMinor, assetId, networkId, amountBaseUnits',
  );
  expect(() => triggerData({ event: 'webhook.test', data: '{"environment":"live"}', sets: [] })).toThrow('data.environment is set by the service, not by trigger; webhook.test takes none');
  expect(() => triggerData({ event: 'order.paid', data: '{oops', sets: [] })).toThrow(/--data is not JSON/);
  expect(() => triggerData({ event: 'order.paid', data: '[1]', sets: [] })).toThrow(/--data must be a JSON object/);
  expect(() => triggerData({ event: 'order.paid', data: null, sets: [{ path: 'data.a.b', value: '1' }] })).toThrow(/data\.a\.b is not a field/);
});
