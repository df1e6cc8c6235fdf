// Coverage ids are typed by each target's catalogue: the `@ts-expect-error` lines below are the
// test that a wrong id fails `npm run typecheck` (were the id accepted, the directive itself
// would be the error). The runtime assertions cover what defineCheck builds.
import { describe, expect, it } from 'vitest';
import type { CheckOutcome } from './core/check.ts';
import { defineCheck } from './core/define.ts';
import { CONTRACT_RULES } from './core/contract-rules.ts';
import { coverageMap, preparedTargets, unaccounted } from './core/coverage-map.ts';
import { createTargetRegistry } from './targets.ts';
import { runCli } from './core/cli.ts';
import { API, API_CATALOGUE, ORDER_WITHOUT_KEY_RULE } from './api/rules.ts';
import type { ApiRule } from './api/rules.ts';
import { RECEIVER_CATALOGUE, VERIFICATION_RULES } from './receiver/rules.ts';
import { HEADERS_RULE, SENDER_CATALOGUE } from './sender/rules.ts';

const passed = async (): Promise<CheckOutcome> => ({ status: 'passed' });

describe('coverage ids', () => {
  it('are the ids of the target catalogue, checked by the type checker', () => {
    const ok: ApiRule = { source: 'orders.openapi.yaml', covers: ['createOrder#no-key-creates'] };
    // @ts-expect-error a typo: 'createOrder#no-key-create' is no rule of the contract nor an entry of API_CATALOGUE
    const typo: ApiRule = { source: 'orders.openapi.yaml', covers: ['createOrder#no-key-create'] };
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

describe('the coverage map (issue 67): every rule of the contract is judged or says why not', () => {
  it('has a check or a written reason for every rule of the specs, per operation', async () => {
    const map = coverageMap(await preparedTargets(createTargetRegistry()));
    // The ids of the specs (x-rules and each operation's documented statuses and problem types) are all in the map.
    expect(map.map((m) => m.id)).toEqual(expect.arrayContaining(CONTRACT_RULES.map((r) => r.id)));
    // A rule named here has neither: write its check (naming the id in `covers`) or its reason (api/no-check.ts, sender/rules.ts).
    expect(unaccounted(map)).toEqual([]);
    // Every status rule of every operation is in the map with its operation.
    expect(map.find((m) => m.id === 'createPayout#status-201')).toMatchObject({ operation: 'createPayout', document: 'transactions', checks: ['api.createPayout.succeeds'] });
  }, 60_000);

  it('claims only rules of the contract or of a catalogue: no check names an id that does not exist', async () => {
    const targets = await preparedTargets(createTargetRegistry());
    const known = new Set([...CONTRACT_RULES.map((r) => r.id), ...targets.flatMap((t) => t.catalogue.map((e) => e.id))]);
    const named = targets.flatMap((t) => t.checks.flatMap((c) => c.rules.flatMap((r) => r.covers ?? [])));
    expect(named.filter((id) => !known.has(id))).toEqual([]);
  }, 60_000);

  it('names a rule without a check and without a reason', () => {
    const check = defineCheck({ book: API, id: 'rules.example', title: 'an example', group: 'g', rules: [{ source: 's', covers: ['createOrder#status-201'] }], run: passed });
    const map = coverageMap([{ target: 'api', checks: [check], catalogue: [{ id: 'createOrder#status-201', document: 'orders.openapi.yaml', rule: 'r' }] }]);
    expect(map.find((m) => m.id === 'createOrder#status-201')?.checks).toEqual(['api.rules.example']);
    expect(unaccounted(map)).toContain('createOrder#no-key-creates');
    expect(unaccounted(map)).not.toContain('createOrder#status-201');
  });
});

describe('payments-conformance coverage', () => {
  it('prints the static map, each rule with its checks or its reasons, and exits 0 when every rule has one', async () => {
    let out = '';
    let err = '';
    const code = await runCli(['coverage'], createTargetRegistry(), { stdout: { write: (s: string) => (out += s) }, stderr: { write: (s: string) => (err += s) } });
    expect(err).toBe('');
    expect(code).toBe(0);
    expect(out).toMatch(/^\d+ rules: \d+ claimed by checks, \d+ without a check \(each with its reason\)$/m);
    expect(out).toContain('  getDelivery#isolation: api.getDelivery.isolation.other-tenant');
    expect(out).toContain('  createOrder#status-500: no_check: api: needs an internal failure');
    expect(out).not.toContain('NO REASON WRITTEN');
  }, 60_000);

  it('refuses an unknown option with exit 2', async () => {
    let err = '';
    const code = await runCli(['coverage', '--target', 'api'], createTargetRegistry(), { stdout: { write: () => undefined }, stderr: { write: (s: string) => (err += s) } });
    expect(code).toBe(2);
    expect(err).toMatch(/unknown option --target/);
  });
});
