// The merchant's database (SQLite through better-sqlite3): the ids of processed events and
// the business state they change, written in ONE transaction so a retried delivery can never
// be applied twice. Every write below runs inside `recordOnce` or `completeFulfilment`.
import Database from 'better-sqlite3';
import type { Database as SqliteDatabase } from 'better-sqlite3';
import type { components } from '../../../generated/types/orders.ts';

/** Payment state of an order, as `GET /v2/orders/{orderId}` reports it. */
export type PaymentStatus = components['schemas']['PaymentStatus'];

export interface OrderRow {
  orderId: string;
  merchantReference: string | null;
  /** The latest payment state we know (event snapshot, then the orders API). */
  paymentStatus: string;
  /** The goods were released. Set once, never cleared. */
  fulfilled: boolean;
  /** An order.paid was stored; the current order must still be read before fulfilment. */
  fulfilmentPending: boolean;
  /** Automatic fulfilment is stopped; a person must look at the order. */
  reviewRequired: boolean;
  reviewReason: string | null;
  /** `createdAt` of the latest event applied to this order (older events arriving later are ignored). */
  lastEventAt: string | null;
  updatedAt: string;
}

export interface PayoutRow {
  transactionId: string;
  thirdPartyId: string;
  /** The exact decimal text of the amount, never a float. */
  amount: string;
  status: string;
  eventId: string;
}

export type RecordOutcome<T> = { duplicate: true } | { duplicate: false; result: T };

/** What the orders API said when fulfilment was decided. */
export type FulfilmentOutcome = 'fulfilled' | 'review' | 'not_paid' | 'nothing_pending';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS processed_events (
  event_id    TEXT PRIMARY KEY,
  event_type  TEXT NOT NULL,
  received_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS orders (
  order_id            TEXT PRIMARY KEY,
  merchant_reference  TEXT,
  payment_status      TEXT NOT NULL,
  fulfilled           INTEGER NOT NULL DEFAULT 0,
  fulfilment_pending  INTEGER NOT NULL DEFAULT 0,
  review_required     INTEGER NOT NULL DEFAULT 0,
  review_reason       TEXT,
  last_event_at       TEXT,
  updated_at          TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS payouts (
  transaction_id TEXT PRIMARY KEY,
  third_party_id TEXT NOT NULL,
  amount         TEXT NOT NULL,
  status         TEXT NOT NULL,
  event_id       TEXT NOT NULL
);
`;

interface OrderRecord {
  order_id: string;
  merchant_reference: string | null;
  payment_status: string;
  fulfilled: number;
  fulfilment_pending: number;
  review_required: number;
  review_reason: string | null;
  last_event_at: string | null;
  updated_at: string;
}

export class MerchantStore {
  readonly db: SqliteDatabase;

  constructor(file: string) {
    this.db = new Database(file);
    // WAL lets readers work during a write; synchronous=FULL makes a commit durable before we
    // answer 2xx (the service treats 2xx as "stored", and will not send the event again).
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = FULL');
    this.db.pragma('busy_timeout = 5000');
    this.db.exec(SCHEMA);
  }

  close(): void {
    this.db.close();
  }

  /**
   * Records `eventId` and runs `apply` (the business update) in one transaction. When the id
   * is already recorded, nothing is applied and `{ duplicate: true }` comes back. The
   * primary key makes this safe across processes too: a concurrent second insert conflicts.
   */
  recordOnce<T>(eventId: string, eventType: string, apply: () => T): RecordOutcome<T> {
    return this.db.transaction((): RecordOutcome<T> => {
      const inserted = this.db
        .prepare('INSERT INTO processed_events (event_id, event_type, received_at) VALUES (?, ?, ?) ON CONFLICT (event_id) DO NOTHING')
        .run(eventId, eventType, new Date().toISOString());
      if (inserted.changes === 0) return { duplicate: true };
      return { duplicate: false, result: apply() };
    }).immediate();
  }

  // ---- business updates (call them inside recordOnce) ----------------------------------

  /** order.created: remember the order; it is not paid. */
  orderCreated(orderId: string, merchantReference: string, createdAt: string): void {
    this.db
      .prepare(
        `INSERT INTO orders (order_id, merchant_reference, payment_status, last_event_at, updated_at)
         VALUES (?, ?, 'unpaid', ?, ?) ON CONFLICT (order_id) DO NOTHING`,
      )
      .run(orderId, merchantReference, createdAt, new Date().toISOString());
  }

  /**
   * order.paid: the snapshot says paid. Marks the order for fulfilment (which reads the
   * current order first) unless a newer event was already applied. Returns whether
   * fulfilment must run.
   */
  orderPaid(orderId: string, merchantReference: string, createdAt: string): boolean {
    const row = this.#orderRecord(orderId);
    const now = new Date().toISOString();
    if (!row) {
      this.db
        .prepare(
          `INSERT INTO orders (order_id, merchant_reference, payment_status, fulfilment_pending, last_event_at, updated_at)
           VALUES (?, ?, 'paid', 1, ?, ?)`,
        )
        .run(orderId, merchantReference, createdAt, now);
      return true;
    }
    if (isOlder(createdAt, row.last_event_at)) return false; // an older order.paid delivered late
    this.db
      .prepare(
        `UPDATE orders SET payment_status = 'paid', review_required = 0, review_reason = NULL,
           fulfilment_pending = CASE WHEN fulfilled = 1 THEN 0 ELSE 1 END, last_event_at = ?, updated_at = ?
         WHERE order_id = ?`,
      )
      .run(createdAt, now, orderId);
    return row.fulfilled === 0;
  }

  /** order.payment_review_required: stop automatic fulfilment and mark the order for review. */
  orderReviewRequired(orderId: string, merchantReference: string, createdAt: string, reviewReason: string | null): void {
    const row = this.#orderRecord(orderId);
    const now = new Date().toISOString();
    if (!row) {
      this.db
        .prepare(
          `INSERT INTO orders (order_id, merchant_reference, payment_status, review_required, review_reason, last_event_at, updated_at)
           VALUES (?, ?, 'review_required', 1, ?, ?, ?)`,
        )
        .run(orderId, merchantReference, reviewReason, createdAt, now);
      return;
    }
    if (isOlder(createdAt, row.last_event_at)) return; // superseded by a newer event
    this.db
      .prepare(
        `UPDATE orders SET payment_status = 'review_required', review_required = 1, review_reason = ?,
           fulfilment_pending = 0, last_event_at = ?, updated_at = ?
         WHERE order_id = ?`,
      )
      .run(reviewReason, createdAt, now, orderId);
  }

  /** payout.completed: the payout settled (a payout completes once). */
  payoutCompleted(p: PayoutRow): void {
    this.db
      .prepare(
        `INSERT INTO payouts (transaction_id, third_party_id, amount, status, event_id) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (transaction_id) DO NOTHING`,
      )
      .run(p.transactionId, p.thirdPartyId, p.amount, p.status, p.eventId);
  }

  // ---- fulfilment ---------------------------------------------------------------------

  /**
   * Decides fulfilment from the CURRENT order (`null`: the orders API answered 404, the order
   * is unknown or cancelled). Releases the goods only when the order is still paid and no
   * review stopped it in the meantime; at most once.
   */
  completeFulfilment(orderId: string, current: { paymentStatus: string } | null): FulfilmentOutcome {
    return this.db.transaction((): FulfilmentOutcome => {
      const row = this.#orderRecord(orderId);
      if (!row || row.fulfilment_pending === 0 || row.fulfilled === 1) return 'nothing_pending';
      const now = new Date().toISOString();
      if (current === null) {
        this.db
          .prepare(`UPDATE orders SET fulfilment_pending = 0, review_required = 1, review_reason = 'order_not_found', updated_at = ? WHERE order_id = ?`)
          .run(now, orderId);
        return 'review';
      }
      if (current.paymentStatus === 'paid' && row.review_required === 0) {
        this.db
          .prepare(`UPDATE orders SET fulfilled = 1, fulfilment_pending = 0, payment_status = 'paid', updated_at = ? WHERE order_id = ?`)
          .run(now, orderId);
        return 'fulfilled';
      }
      if (current.paymentStatus === 'review_required') {
        this.db
          .prepare(`UPDATE orders SET fulfilment_pending = 0, review_required = 1, payment_status = 'review_required', updated_at = ? WHERE order_id = ?`)
          .run(now, orderId);
        return 'review';
      }
      this.db.prepare(`UPDATE orders SET fulfilment_pending = 0, payment_status = ?, updated_at = ? WHERE order_id = ?`).run(current.paymentStatus, now, orderId);
      return 'not_paid';
    }).immediate();
  }

  /** Orders whose fulfilment still waits for the orders API (after a crash or an API outage). */
  pendingFulfilments(): string[] {
    return (this.db.prepare('SELECT order_id FROM orders WHERE fulfilment_pending = 1 ORDER BY updated_at').all() as { order_id: string }[]).map(
      (r) => r.order_id,
    );
  }

  // ---- reads ----------------------------------------------------------------------------

  hasEvent(eventId: string): boolean {
    return this.db.prepare('SELECT 1 FROM processed_events WHERE event_id = ?').get(eventId) !== undefined;
  }

  eventCount(): number {
    return (this.db.prepare('SELECT COUNT(*) AS n FROM processed_events').get() as { n: number }).n;
  }

  order(orderId: string): OrderRow | undefined {
    const r = this.#orderRecord(orderId);
    if (!r) return undefined;
    return {
      orderId: r.order_id,
      merchantReference: r.merchant_reference,
      paymentStatus: r.payment_status,
      fulfilled: r.fulfilled === 1,
      fulfilmentPending: r.fulfilment_pending === 1,
      reviewRequired: r.review_required === 1,
      reviewReason: r.review_reason,
      lastEventAt: r.last_event_at,
      updatedAt: r.updated_at,
    };
  }

  payout(transactionId: string): PayoutRow | undefined {
    const r = this.db.prepare('SELECT * FROM payouts WHERE transaction_id = ?').get(transactionId) as
      | { transaction_id: string; third_party_id: string; amount: string; status: string; event_id: string }
      | undefined;
    return r && { transactionId: r.transaction_id, thirdPartyId: r.third_party_id, amount: r.amount, status: r.status, eventId: r.event_id };
  }

  #orderRecord(orderId: string): OrderRecord | undefined {
    return this.db.prepare('SELECT * FROM orders WHERE order_id = ?').get(orderId) as OrderRecord | undefined;
  }
}

export function openMerchantStore(file: string): MerchantStore {
  return new MerchantStore(file);
}

/** Whether event time `a` is strictly before `b` (ISO 8601 UTC; `b` null: nothing applied yet). */
function isOlder(a: string, b: string | null): boolean {
  if (b === null) return false;
  return Date.parse(a) < Date.parse(b);
}
