// What the repositories of a transaction report about its writes, for the store to act on
// once the transaction commits. Read views write nothing and report nothing.
export interface WriteNotes {
  /** A write may have made deliveries due (one wake-up of the delivery listeners on commit). */
  deliveriesReady(): void;
  /** A write changed the environment's transactions (Store.transactionsVersion moves on commit). */
  transactionsChanged(environmentId: string): void;
  /** A write recorded an event of the environment (the event stream's listeners hear it on commit). */
  eventsRecorded(environmentId: string): void;
}

export const NO_NOTES: WriteNotes = { deliveriesReady: () => undefined, transactionsChanged: () => undefined, eventsRecorded: () => undefined };
