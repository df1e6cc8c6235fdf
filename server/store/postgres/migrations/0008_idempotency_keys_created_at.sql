-- 0008_idempotency_keys_created_at: the pruner's path to expired Idempotency-Keys (issue 42).
-- The table has no seq, so the pruner's batch scanned it by row address and read past every
-- live or dead key before the first expired one; ordered by this index it reads only the keys
-- it deletes. A plain CREATE INDEX (migrations run in a transaction): order creation waits
-- for the build, a few seconds per million keys; the pruner keeps the table to one
-- IDEMPOTENCY_KEY_RETENTION (72 h) of keys.
CREATE INDEX order_idempotency_keys_created_at ON order_idempotency_keys (created_at);
