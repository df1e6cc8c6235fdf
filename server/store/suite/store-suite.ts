// The behaviour every Store implementation must show, written against the Store interface
// only. Use it from an implementation's test file:
//
//   describeStoreSuite('sqlite', (o) => openSqliteStore({ file: freshFile(), ...o }));
//
// `open` must return a store over a fresh, empty database on every call (the queue cases
// claim whatever is due in the whole database), telling `onStatement` of every statement its
// writes and the pruner send (the retention cases count a batch's statements). The suite
// migrates and closes it.
import { afterEach, beforeEach, describe } from 'vitest';
import type { Store } from '../../domain/store.ts';
import { coreCases } from './core-cases.ts';
import { isolationCases } from './isolation-cases.ts';
import { lifecycleCases } from './lifecycle-cases.ts';
import { orderCreationCases } from './order-creation-cases.ts';
import { payoutCreationCases } from './payout-creation-cases.ts';
import { passkeyCases } from './passkey-cases.ts';
import { queueCases } from './queue-cases.ts';
import { queueStatsCases } from './queue-stats-cases.ts';
import { recoveryCases } from './recovery-cases.ts';
import { sealedCases } from './sealed-cases.ts';
import { retentionCases, type OpenBeside, type StatementCounter } from './retention-cases.ts';
import { streamCases } from './stream-cases.ts';
import { traceContextCases } from './trace-context-cases.ts';
import { webhookCases } from './webhook-cases.ts';

/** What the suite asks of the store it opens. */
export interface SuiteStoreOptions {
  onStatement: (text: string) => void;
}

/** What a group of cases is declared with. */
interface GroupArgs {
  s: () => Store;
  statements: StatementCounter;
  openBeside: OpenBeside;
}

/** The suite's groups of cases, in the order they run. */
const GROUPS = {
  'tenants, wallets, transactions and orders': ({ s }: GroupArgs) => coreCases(s),
  'events, endpoints and deliveries': ({ s }: GroupArgs) => webhookCases(s),
  'order creation': ({ s }: GroupArgs) => orderCreationCases(s),
  'payout creation': ({ s }: GroupArgs) => payoutCreationCases(s),
  'event stream': ({ s }: GroupArgs) => streamCases(s),
  'delivery queue': ({ s }: GroupArgs) => queueCases(s),
  'delivery queue depth': ({ s }: GroupArgs) => queueStatsCases(s),
  retention: ({ s, statements, openBeside }: GroupArgs) => retentionCases(s, statements, openBeside),
  'recovery by time range': ({ s }: GroupArgs) => recoveryCases(s),
  'portal passkeys': ({ s }: GroupArgs) => passkeyCases(s),
  'sealed secrets': ({ s }: GroupArgs) => sealedCases(s),
  'tenant isolation': ({ s }: GroupArgs) => isolationCases(s),
  'trace context of events': ({ s }: GroupArgs) => traceContextCases(s),
  'misuse and closing': ({ s }: GroupArgs) => lifecycleCases(s),
};
export type SuiteGroup = keyof typeof GROUPS;
export const SUITE_GROUPS = Object.keys(GROUPS) as SuiteGroup[];

/**
 * `openBeside(store)`: a second, unmigrated store over the same database as `store` (another
 * instance of one deployment; the case that opens it closes it, before `store`). `only`: the
 * groups this file runs (default all), so that a slow store's suite can be spread over files
 * that run side by side.
 */
export function describeStoreSuite(name: string, open: (opts: SuiteStoreOptions) => Promise<Store>, openBeside: OpenBeside, only: readonly SuiteGroup[] = SUITE_GROUPS): void {
  describe(`Store suite: ${name}`, () => {
    let store: Store | undefined;
    const s = (): Store => {
      if (!store) throw new Error('store not open');
      return store;
    };
    const statements: StatementCounter = { n: 0 };
    beforeEach(async () => {
      store = await open({ onStatement: () => (statements.n += 1) });
      await store.migrate();
    });
    afterEach(async () => {
      await store?.close();
      store = undefined;
    });

    for (const group of only) describe(group, () => GROUPS[group]({ s, statements, openBeside }));
  });
}
