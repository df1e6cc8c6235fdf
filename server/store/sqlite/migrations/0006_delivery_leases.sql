-- 0006_delivery_leases: the queue's structure of the PostgreSQL store (its 0005) on SQLite, so
-- that both stores claim, complete and read leases with the same statements (issue 31).
-- - Leases live in delivery_leases, one row per leased delivery with its destination: a claim
--   inserts small rows and counts live leases per destination from delivery_leases_destination
--   alone, where it used to rewrite the wide delivery row and, for every lease, look the
--   delivery up to compute its destination; a completion deletes the row.
-- - deliveries gets `destination` (a virtual generated column, the expression the queue used
--   to repeat) and its indexes are those of PostgreSQL: deliveries_due carries the destination
--   (seq is the rowid), deliveries_destination_due is keyed on it.
-- - delivery_records is what the repositories read: a delivery with its lease, if any.
-- Leases held at migration time move to delivery_leases unchanged (owner and end), so their
-- holder still records its attempts. SQLite cannot drop a column named in a CHECK, so the
-- table is rebuilt with the same rows, seq values and AUTOINCREMENT counter.
-- Migrations are append-only; from 0007 on both stores share numbers and names (README.md).

CREATE TABLE delivery_leases (
  delivery_seq INTEGER PRIMARY KEY,
  -- The delivery's destination, for the per-destination limit without a join.
  destination  TEXT NOT NULL,
  owner        TEXT NOT NULL,
  expires_at   INTEGER NOT NULL
) STRICT;
-- Live leases, counted per destination when claiming.
CREATE INDEX delivery_leases_destination ON delivery_leases (destination, expires_at);

INSERT INTO delivery_leases (delivery_seq, destination, owner, expires_at)
  SELECT seq, CASE WHEN endpoint_id IS NOT NULL THEN 'e:' || endpoint_id ELSE 'u:' || url END, lease_owner, lease_expires_at
    FROM deliveries WHERE lease_owner IS NOT NULL;

-- The rows and the AUTOINCREMENT counter, kept aside while the table is made anew.
CREATE TABLE deliveries_before_0006 AS SELECT * FROM deliveries;
CREATE TABLE deliveries_sequence_before_0006 AS SELECT seq FROM sqlite_sequence WHERE name = 'deliveries';
-- delivery_attempts references deliveries: dropping the table orphans the attempts until the
-- rows are back, so the check waits for the commit (this pragma ends with the transaction).
PRAGMA defer_foreign_keys = ON;
DROP TABLE deliveries;

CREATE TABLE deliveries (
  seq                INTEGER PRIMARY KEY AUTOINCREMENT,
  id                 TEXT NOT NULL UNIQUE,
  environment_id     TEXT NOT NULL REFERENCES environments (id),
  event_id           TEXT NOT NULL REFERENCES events (id),
  kind               TEXT NOT NULL CHECK (kind IN ('order_event', 'webhook_test', 'payout_callback')),
  endpoint_id        TEXT REFERENCES webhook_endpoints (id),
  endpoint_version   INTEGER,
  url                TEXT NOT NULL,
  -- Where the delivery goes, for the per-destination limit: its endpoint, or its url for
  -- payout callbacks.
  destination        TEXT NOT NULL GENERATED ALWAYS AS (
                       CASE WHEN endpoint_id IS NOT NULL THEN 'e:' || endpoint_id ELSE 'u:' || url END
                     ) VIRTUAL,
  state              TEXT NOT NULL CHECK (state IN ('pending', 'delivered', 'failed', 'disabled')),
  attempt_count      INTEGER NOT NULL CHECK (attempt_count >= 0),
  cycle              INTEGER NOT NULL CHECK (cycle >= 0),
  next_attempt_at    INTEGER,
  order_id           TEXT,
  merchant_reference TEXT,
  transaction_id     TEXT,
  created_at         INTEGER NOT NULL,
  updated_at         INTEGER NOT NULL,
  delivered_at       INTEGER
) STRICT;

INSERT INTO deliveries (seq, id, environment_id, event_id, kind, endpoint_id, endpoint_version, url, state,
  attempt_count, cycle, next_attempt_at, order_id, merchant_reference, transaction_id, created_at, updated_at, delivered_at)
SELECT seq, id, environment_id, event_id, kind, endpoint_id, endpoint_version, url, state,
  attempt_count, cycle, next_attempt_at, order_id, merchant_reference, transaction_id, created_at, updated_at, delivered_at
FROM deliveries_before_0006;
-- The AUTOINCREMENT counter goes on from where it was (a seq is never reused).
DELETE FROM sqlite_sequence WHERE name = 'deliveries';
INSERT INTO sqlite_sequence (name, seq) SELECT 'deliveries', seq FROM deliveries_sequence_before_0006;
DROP TABLE deliveries_sequence_before_0006;
DROP TABLE deliveries_before_0006;

-- The queue: pending deliveries by due time, with the destination a claim skips on.
CREATE INDEX deliveries_due ON deliveries (next_attempt_at, destination) WHERE state = 'pending';
-- Pending deliveries per destination in due order (a claim's loose scan; see 0003).
CREATE INDEX deliveries_destination_due ON deliveries (destination, next_attempt_at) WHERE state = 'pending';
-- As in 0001.
CREATE INDEX deliveries_endpoint_pending ON deliveries (endpoint_id, endpoint_version) WHERE state = 'pending';
CREATE INDEX deliveries_environment ON deliveries (environment_id, seq DESC);
CREATE INDEX deliveries_event ON deliveries (event_id);
CREATE INDEX deliveries_order ON deliveries (environment_id, order_id) WHERE order_id IS NOT NULL;
CREATE INDEX deliveries_merchant_reference ON deliveries (environment_id, merchant_reference) WHERE merchant_reference IS NOT NULL;

-- What the repositories read: a delivery with its lease, if any (expired or not).
CREATE VIEW delivery_records AS
  SELECT d.*, l.owner AS lease_owner, l.expires_at AS lease_expires_at
    FROM deliveries d LEFT JOIN delivery_leases l ON l.delivery_seq = d.seq;
