-- Leases in a table of their own (issue 16). In the delivery row, a lease's two columns were
-- indexed (deliveries_due included them, deliveries_leased was keyed on them), so a claim and a
-- completion each wrote a new version of the row into all ten indexes of deliveries, and the
-- dead versions slowed the next scans. Now a claim inserts a small row here and only locks the
-- delivery; the completion deletes it in the statement that moves the delivery on.
--
-- Rule of every writer of a lease: it holds the delivery's row lock first (claims take it with
-- SKIP LOCKED, completions and releases wait for it), so a lease changes only under the lock of
-- its delivery. No foreign key: its check would take a second lock on the delivery row for every
-- claim, and deliveries are never deleted.
--
-- Stop instances of an older version before starting this one: they read the columns this
-- migration drops.
CREATE TABLE delivery_leases (
  delivery_seq BIGINT PRIMARY KEY,
  -- The delivery's destination, for the per-destination limit without a join.
  destination  TEXT NOT NULL,
  owner        TEXT NOT NULL,
  expires_at   BIGINT NOT NULL
);
-- Live leases, counted per destination when claiming.
CREATE INDEX delivery_leases_destination ON delivery_leases (destination, expires_at);

INSERT INTO delivery_leases (delivery_seq, destination, owner, expires_at)
  SELECT seq, destination, lease_owner, lease_expires_at FROM deliveries WHERE lease_owner IS NOT NULL;

DROP INDEX deliveries_leased;
DROP INDEX deliveries_due;
CREATE INDEX deliveries_due ON deliveries (next_attempt_at, seq) INCLUDE (destination) WHERE state = 'pending';
ALTER TABLE deliveries DROP COLUMN lease_owner, DROP COLUMN lease_expires_at;

-- What the repositories read: a delivery with its lease, if any (expired or not, as before).
CREATE VIEW delivery_records AS
  SELECT d.*, l.owner AS lease_owner, l.expires_at AS lease_expires_at
    FROM deliveries d LEFT JOIN delivery_leases l ON l.delivery_seq = d.seq;
