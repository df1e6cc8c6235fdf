-- The event stream (GET /v2/events/stream, repos/event-stream.ts) reads events in commit
-- order. seq is taken at insert, and transactions commit concurrently, so seq alone is not
-- commit order: each row also records the id of the transaction that wrote it (the top-level
-- one, also inside a savepoint), which the stream orders by below the oldest running one.
ALTER TABLE events ADD COLUMN tx_id xid8 NOT NULL DEFAULT pg_current_xact_id();
CREATE INDEX events_environment_commit ON events (environment_id, tx_id, seq);
