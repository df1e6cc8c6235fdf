-- A transaction's amount is in the asset's units only (issue 12): a payment of an order stores
-- it when its base units fit an Amount exactly and NULL otherwise; amount_base_units is its
-- exact amount. SQLite cannot drop a NOT NULL constraint, so the table is rebuilt with the same
-- columns, constraints, rowids (the newest-first tie-break) and indexes. Payments of orders
-- recorded before stored their base units in amount: that value meant another unit, so it is
-- cleared (amount_base_units keeps the exact amount).
CREATE TABLE transactions_rebuilt (
  id                 TEXT PRIMARY KEY,
  environment_id     TEXT NOT NULL,
  tenant_id          TEXT NOT NULL,
  type               TEXT NOT NULL CHECK (type IN ('payout', 'staking', 'payment', 'refund')),
  side               TEXT NOT NULL CHECK (side IN ('credit', 'debit')),
  status             TEXT NOT NULL,
  user_id            TEXT,
  amount             TEXT,
  amount_base_units  TEXT,
  third_party_id     TEXT,
  notify_url         TEXT,
  asset              TEXT,
  duration_in_months INTEGER,
  order_id           TEXT,
  order_number       TEXT,
  tx_hash            TEXT,
  verified           INTEGER CHECK (verified IN (0, 1)),
  refund_email       TEXT,
  created_at         INTEGER NOT NULL,
  completed_at       INTEGER,
  FOREIGN KEY (environment_id, tenant_id) REFERENCES environments (id, tenant_id),
  UNIQUE (environment_id, type, third_party_id)
) STRICT;
INSERT INTO transactions_rebuilt (rowid, id, environment_id, tenant_id, type, side, status, user_id, amount,
  amount_base_units, third_party_id, notify_url, asset, duration_in_months, order_id, order_number, tx_hash,
  verified, refund_email, created_at, completed_at)
SELECT rowid, id, environment_id, tenant_id, type, side, status, user_id,
  CASE WHEN type = 'payment' AND order_id IS NOT NULL THEN NULL ELSE amount END,
  amount_base_units, third_party_id, notify_url, asset, duration_in_months, order_id, order_number, tx_hash,
  verified, refund_email, created_at, completed_at
FROM transactions;
DROP TABLE transactions;
ALTER TABLE transactions_rebuilt RENAME TO transactions;
CREATE INDEX transactions_user ON transactions (environment_id, user_id, created_at);
CREATE INDEX transactions_order_number ON transactions (environment_id, order_number) WHERE order_number IS NOT NULL;
CREATE INDEX transactions_tx_hash ON transactions (environment_id, tx_hash) WHERE tx_hash IS NOT NULL;
CREATE INDEX transactions_order ON transactions (environment_id, order_id) WHERE order_id IS NOT NULL;
