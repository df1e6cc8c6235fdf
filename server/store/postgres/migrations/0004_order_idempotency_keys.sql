-- Idempotency-Key of POST /v2/orders (issue 12): the order a key created in a tenant
-- environment and the SHA-256 of the request body it was created with, so a retry with the
-- same key and body replays the answer and one with another body is refused. The unique key
-- settles concurrent duplicates: one insert wins, the others read the winner.
CREATE TABLE order_idempotency_keys (
  environment_id  TEXT NOT NULL REFERENCES environments (id),
  idempotency_key TEXT NOT NULL,
  request_hash    TEXT NOT NULL,
  order_id        TEXT NOT NULL REFERENCES orders (id),
  created_at      BIGINT NOT NULL,
  CONSTRAINT order_idempotency_keys_key UNIQUE (environment_id, idempotency_key)
);
