// The repositories of one connection, for both dialects. What the dialects do differently in
// a whole method comes in as a hook; everything else is the shared SQL of this folder.
import type { Sql } from '../sql.ts';
import type { Tx } from '../../domain/store.ts';
import { deliveryRepo } from './deliveries.ts';
import { endpointRepo } from './endpoints.ts';
import { eventRepo } from './events.ts';
import { orderRepo } from './orders.ts';
import { passkeyRepo } from './passkeys.ts';
import { sealedRepo } from './sealed.ts';
import { tenantRepo } from './tenants.ts';
import { transactionRepo } from './transactions.ts';

import type { DialectHooks } from './hooks.ts';
import { NO_NOTES, type WriteNotes } from './notes.ts';

export type { DialectHooks, WriteNotes };

export type Repositories = Omit<Tx, 'afterCommit'>;

/** Every repository over one connection; `notes` hears of the writes the store acts on at commit. */
export function repositories<B, J>(sql: Sql<B, J>, hooks: DialectHooks, notes: WriteNotes = NO_NOTES): Repositories {
  return {
    tenants: tenantRepo(sql, hooks.adjustWallet),
    transactions: transactionRepo(sql, hooks, notes.transactionsChanged),
    orders: orderRepo(sql, hooks.nextOrderNumber),
    events: eventRepo(sql, notes.eventsRecorded),
    endpoints: endpointRepo(sql, hooks.insertionOrder),
    deliveries: deliveryRepo(sql, hooks, notes.deliveriesReady, notes.eventsRecorded),
    passkeys: passkeyRepo(sql),
    sealed: sealedRepo(sql),
  };
}
