// Coverage ids are typed by each target's catalogue: the `@ts-expect-error` lines below are the
// test that a wrong id fails `npm run typecheck` (were the id accepted, the directive itself
// would be the error). The runtime assertions cover what defineCheck builds.
import { describe, expect, it } from 'vitest';
import type { CheckOutcome } from './core/check.ts';
import { defineCheck } from './core/define.ts';
import { API, API_CATALOGUE, ORDER_WITHOUT_KEY_RULE } from './api/rules.ts';
import type { ApiRule } from './api/rules.ts';
import { RECEIVER_CATALOGUE, VERIFICATION_RULES } from './receiver/rules.ts';
import { HEADERS_RULE, SENDER_CATALOGUE } from './sender/rules.ts';

const passed = async (): Promise<CheckOutcome> => ({ status: 'passed' });

describe('coverage ids', () => {
  it('are the ids of the target catalogue, checked by the type checker', () => {
    const ok: ApiRule = { source: 'orders.openapi.yaml', covers: ['orders#no-key'] };
    // @ts-expect-error a typo: 'orders#no-kye' is no entry of API_CATALOGUE
    const typo: ApiRule = { source: 'orders.openapi.yaml', covers: ['orders#no-kye'] };
    const check = defineCheck({
      book: API,
      id: 'rules.example',
      title: 'an example',
      group: 'stateful rules',
      // @ts-expect-error a typo in a rule written where the check is defined
      rules: [{ source: 'PRODUCT.md', covers: ['product#refnd'] }],
      run: passed,
    });
    defineCheck({
      book: API,
      id: 'rules.example',
      title: 'an example',
      group: 'stateful rules',
      // @ts-expect-error a sender rule: 'interface#headers' is in the sender's catalogue, not the api's
      rules: [HEADERS_RULE],
      run: passed,
    });
    expect([ok, typo, check].length).toBe(3);
  });

  it('name entries of their own catalogue at run time too', () => {
    const ids = (c: readonly { id: string }[]): string[] => c.map((e) => e.id);
    expect(ids(API_CATALOGUE)).toEqual(expect.arrayContaining([...(ORDER_WITHOUT_KEY_RULE.covers ?? [])]));
    expect(ids(SENDER_CATALOGUE)).toEqual(expect.arrayContaining([...(HEADERS_RULE.covers ?? [])]));
    expect(ids(RECEIVER_CATALOGUE).slice(0, 8)).toEqual([1, 2, 3, 4, 5, 6, 7, 8].map((n) => `interface#signatures-${n}`));
    expect(VERIFICATION_RULES[4].covers).toEqual(['interface#signatures-4']);
  });
});

describe('defineCheck', () => {
  it('prefixes the id with the target and keeps title, group and rules', async () => {
    const check = defineCheck({ book: API, id: 'rules.order-without-key-creates', title: 'two orders', group: 'stateful rules', rules: [ORDER_WITHOUT_KEY_RULE], run: passed });
    expect(check).toMatchObject({ id: 'api.rules.order-without-key-creates', target: 'api', title: 'two orders', group: 'stateful rules', rules: [ORDER_WITHOUT_KEY_RULE] });
    expect(await check.run({ seed: 1, signal: new AbortController().signal })).toEqual({ status: 'passed' });
  });
});
