-- 0001_init: the first schema of the PostgreSQL store, the same model as the SQLite store's
-- 0001_init with PostgreSQL types.
-- Conventions: the wallet balance is NUMERIC(38,8) so a debit is one guarded UPDATE that can
-- never take it below zero, whoever else is debiting; other amounts and token base units are
-- TEXT holding exact decimal strings (as on SQLite); times are BIGINT epoch milliseconds;
-- permissions are a JSONB array. events and deliveries keep a BIGSERIAL seq as the key of
-- newest-first cursors; transactions and endpoints keep one to break creation-time ties in
-- insertion order (SQLite's rowid).
-- Unique constraints carry explicit names: the store maps them to UniqueViolation by name.
-- Migrations are append-only: never edit this file once released, add 0002_*.sql instead.

CREATE TABLE schema_migrations (
  version    INTEGER PRIMARY KEY,
  applied_at BIGINT NOT NULL
);

CREATE TABLE tenants (
  id         TEXT PRIMARY KEY,
  name       TEXT NOT NULL,
  created_at BIGINT NOT NULL
);

CREATE TABLE environments (
  id                  TEXT PRIMARY KEY,
  tenant_id           TEXT NOT NULL REFERENCES tenants (id),
  name                TEXT NOT NULL CHECK (name IN ('test', 'live')),
  -- The distribution wallet can never go below zero, whatever the code does.
  wallet_balance      NUMERIC(38, 8) NOT NULL CHECK (wallet_balance >= 0),
  callback_secret_enc TEXT NOT NULL,
  created_at          BIGINT NOT NULL,
  CONSTRAINT environments_tenant_name UNIQUE (tenant_id, name),
  -- Lets children reference (environment, tenant) together, so they cannot disagree.
  CONSTRAINT environments_id_tenant UNIQUE (id, tenant_id)
);

CREATE TABLE api_keys (
  id             TEXT PRIMARY KEY,
  tenant_id      TEXT NOT NULL,
  environment_id TEXT NOT NULL,
  secret_hash    TEXT NOT NULL,
  permissions    JSONB NOT NULL CHECK (jsonb_typeof(permissions) = 'array'),
  label          TEXT,
  created_at     BIGINT NOT NULL,
  revoked_at     BIGINT,
  FOREIGN KEY (environment_id, tenant_id) REFERENCES environments (id, tenant_id)
);
CREATE INDEX api_keys_environment ON api_keys (environment_id);

CREATE TABLE members (
  id         TEXT PRIMARY KEY,
  tenant_id  TEXT NOT NULL REFERENCES tenants (id),
  email      TEXT NOT NULL,
  role       TEXT NOT NULL CHECK (role IN ('administrator', 'developer', 'viewer')),
  active     BOOLEAN NOT NULL,
  token_hash TEXT NOT NULL CONSTRAINT members_token_hash UNIQUE,
  created_at BIGINT NOT NULL
);
CREATE INDEX members_tenant ON members (tenant_id);

CREATE TABLE service_accounts (
  id         TEXT PRIMARY KEY,
  tenant_id  TEXT NOT NULL REFERENCES tenants (id),
  email      TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  CONSTRAINT service_accounts_email UNIQUE (tenant_id, email)
);

CREATE TABLE transactions (
  id                 TEXT PRIMARY KEY,
  -- Insertion order: breaks ties between rows created in the same millisecond.
  seq                BIGSERIAL NOT NULL,
  environment_id     TEXT NOT NULL,
  tenant_id          TEXT NOT NULL,
  type               TEXT NOT NULL CHECK (type IN ('payout', 'staking', 'payment', 'refund')),
  side               TEXT NOT NULL CHECK (side IN ('credit', 'debit')),
  status             TEXT NOT NULL,
  user_id            TEXT,
  amount             TEXT NOT NULL,
  amount_base_units  TEXT,
  third_party_id     TEXT,
  notify_url         TEXT,
  asset              TEXT,
  duration_in_months INTEGER,
  order_id           TEXT,
  order_number       TEXT,
  tx_hash            TEXT,
  verified           BOOLEAN,
  refund_email       TEXT,
  created_at         BIGINT NOT NULL,
  completed_at       BIGINT,
  FOREIGN KEY (environment_id, tenant_id) REFERENCES environments (id, tenant_id),
  -- thirdPartyId is unique per tenant environment and operation (payout vs staking).
  -- NULLs are distinct, so payments and refunds without one never collide.
  CONSTRAINT transactions_third_party_id UNIQUE (environment_id, type, third_party_id)
);
CREATE INDEX transactions_user ON transactions (environment_id, user_id, created_at DESC, seq DESC);
CREATE INDEX transactions_order_number ON transactions (environment_id, order_number) WHERE order_number IS NOT NULL;
CREATE INDEX transactions_tx_hash ON transactions (environment_id, tx_hash) WHERE tx_hash IS NOT NULL;
CREATE INDEX transactions_order ON transactions (environment_id, order_id) WHERE order_id IS NOT NULL;

CREATE TABLE orders (
  id                     TEXT PRIMARY KEY,
  environment_id         TEXT NOT NULL REFERENCES environments (id),
  order_number           TEXT NOT NULL,
  merchant_reference     TEXT NOT NULL,
  amount_minor           BIGINT NOT NULL CHECK (amount_minor >= 0),
  asset_id               TEXT,
  network_id             TEXT,
  amount_base_units      TEXT,
  received_base_units    TEXT NOT NULL,
  overpayment_base_units TEXT,
  status                 TEXT NOT NULL,
  payment_status         TEXT NOT NULL,
  review_reason          TEXT,
  created_at             BIGINT NOT NULL,
  updated_at             BIGINT NOT NULL,
  CONSTRAINT orders_order_number UNIQUE (environment_id, order_number)
);

-- The last order number handed out per environment (ORD-000001 is 1).
CREATE TABLE order_number_sequences (
  environment_id TEXT PRIMARY KEY REFERENCES environments (id),
  last_value     BIGINT NOT NULL CHECK (last_value >= 1)
);

-- seq: monotonic, never reused, the key of newest-first cursors.
CREATE TABLE events (
  seq                BIGSERIAL PRIMARY KEY,
  id                 TEXT NOT NULL CONSTRAINT events_id UNIQUE,
  environment_id     TEXT NOT NULL REFERENCES environments (id),
  type               TEXT NOT NULL,
  payload            TEXT NOT NULL,
  order_id           TEXT,
  merchant_reference TEXT,
  transaction_id     TEXT,
  created_at         BIGINT NOT NULL
);
CREATE INDEX events_environment ON events (environment_id, seq DESC);
CREATE INDEX events_environment_type ON events (environment_id, type, seq DESC);

CREATE TABLE webhook_endpoints (
  id                    TEXT PRIMARY KEY,
  -- Insertion order: breaks ties between endpoints created in the same millisecond.
  seq                   BIGSERIAL NOT NULL,
  environment_id        TEXT NOT NULL REFERENCES environments (id),
  url                   TEXT NOT NULL,
  secret_enc            TEXT NOT NULL,
  active                BOOLEAN NOT NULL,
  version               INTEGER NOT NULL CHECK (version >= 0),
  last_test_delivery_id TEXT,
  created_at            BIGINT NOT NULL,
  updated_at            BIGINT NOT NULL,
  disabled_at           BIGINT
);
-- At most one active endpoint per environment.
CREATE UNIQUE INDEX webhook_endpoints_one_active ON webhook_endpoints (environment_id) WHERE active;
CREATE INDEX webhook_endpoints_environment ON webhook_endpoints (environment_id, created_at DESC, seq DESC);

CREATE TABLE deliveries (
  seq                BIGSERIAL PRIMARY KEY,
  id                 TEXT NOT NULL CONSTRAINT deliveries_id UNIQUE,
  environment_id     TEXT NOT NULL REFERENCES environments (id),
  event_id           TEXT NOT NULL REFERENCES events (id),
  kind               TEXT NOT NULL CHECK (kind IN ('order_event', 'webhook_test', 'payout_callback')),
  endpoint_id        TEXT REFERENCES webhook_endpoints (id),
  endpoint_version   INTEGER,
  url                TEXT NOT NULL,
  -- Where the delivery goes, for the per-destination limit: its endpoint, or its url for
  -- payout callbacks. Kept by PostgreSQL when a restart moves the delivery.
  destination        TEXT NOT NULL GENERATED ALWAYS AS (
                       CASE WHEN endpoint_id IS NOT NULL THEN 'e:' || endpoint_id ELSE 'u:' || url END
                     ) STORED,
  state              TEXT NOT NULL CHECK (state IN ('pending', 'delivered', 'failed', 'disabled')),
  attempt_count      INTEGER NOT NULL CHECK (attempt_count >= 0),
  cycle              INTEGER NOT NULL CHECK (cycle >= 0),
  next_attempt_at    BIGINT,
  lease_owner        TEXT,
  lease_expires_at   BIGINT,
  order_id           TEXT,
  merchant_reference TEXT,
  transaction_id     TEXT,
  created_at         BIGINT NOT NULL,
  updated_at         BIGINT NOT NULL,
  delivered_at       BIGINT,
  CHECK ((lease_owner IS NULL) = (lease_expires_at IS NULL))
);
-- The queue: pending deliveries by due time. The included columns let a claim skip the
-- deliveries it cannot take (leased, or to a destination at its limit) from the index alone.
CREATE INDEX deliveries_due ON deliveries (next_attempt_at, seq) INCLUDE (destination, lease_owner, lease_expires_at) WHERE state = 'pending';
-- Live leases, counted per destination when claiming.
CREATE INDEX deliveries_leased ON deliveries (destination, lease_expires_at) WHERE lease_owner IS NOT NULL;
-- Pending deliveries of an endpoint, for disabling older versions.
CREATE INDEX deliveries_endpoint_pending ON deliveries (endpoint_id, endpoint_version) WHERE state = 'pending';
-- Newest-first listing (seq follows insertion, hence creation, order) and the search keys.
CREATE INDEX deliveries_environment ON deliveries (environment_id, seq DESC);
CREATE INDEX deliveries_event ON deliveries (event_id);
CREATE INDEX deliveries_order ON deliveries (environment_id, order_id) WHERE order_id IS NOT NULL;
CREATE INDEX deliveries_merchant_reference ON deliveries (environment_id, merchant_reference) WHERE merchant_reference IS NOT NULL;

-- Every attempt of every cycle; the primary key doubles as the by-delivery index.
CREATE TABLE delivery_attempts (
  delivery_id         TEXT NOT NULL REFERENCES deliveries (id),
  cycle               INTEGER NOT NULL,
  number              INTEGER NOT NULL CHECK (number >= 1),
  started_at          BIGINT NOT NULL,
  duration_ms         INTEGER NOT NULL CHECK (duration_ms >= 0),
  signature_timestamp BIGINT NOT NULL,
  outcome             TEXT NOT NULL CHECK (outcome IN ('response', 'error')),
  status_code         INTEGER,
  error_class         TEXT,
  response_body       TEXT,
  success             BOOLEAN NOT NULL,
  PRIMARY KEY (delivery_id, cycle, number)
);
