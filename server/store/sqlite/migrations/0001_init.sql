-- 0001_init: the first schema of the embedded store.
-- Conventions: amounts and token base units are TEXT holding exact decimal strings; times are
-- INTEGER epoch milliseconds; booleans are INTEGER 0/1; permissions are JSON text. Tables are
-- STRICT so a value of the wrong type is refused instead of silently stored.
-- Migrations are append-only: never edit this file once released, add 0002_*.sql instead.

CREATE TABLE schema_migrations (
  version    INTEGER PRIMARY KEY,
  applied_at INTEGER NOT NULL
) STRICT;

CREATE TABLE tenants (
  id         TEXT PRIMARY KEY,
  name       TEXT NOT NULL,
  created_at INTEGER NOT NULL
) STRICT;

CREATE TABLE environments (
  id                  TEXT PRIMARY KEY,
  tenant_id           TEXT NOT NULL REFERENCES tenants (id),
  name                TEXT NOT NULL CHECK (name IN ('test', 'live')),
  -- The distribution wallet can never go below zero, whatever the code does.
  wallet_balance      TEXT NOT NULL CHECK (wallet_balance NOT LIKE '-%'),
  callback_secret_enc TEXT NOT NULL,
  created_at          INTEGER NOT NULL,
  UNIQUE (tenant_id, name),
  -- Lets children reference (environment, tenant) together, so they cannot disagree.
  UNIQUE (id, tenant_id)
) STRICT;

CREATE TABLE api_keys (
  id             TEXT PRIMARY KEY,
  tenant_id      TEXT NOT NULL,
  environment_id TEXT NOT NULL,
  secret_hash    TEXT NOT NULL,
  permissions    TEXT NOT NULL CHECK (json_valid(permissions) AND json_type(permissions) = 'array'),
  label          TEXT,
  created_at     INTEGER NOT NULL,
  revoked_at     INTEGER,
  FOREIGN KEY (environment_id, tenant_id) REFERENCES environments (id, tenant_id)
) STRICT;
CREATE INDEX api_keys_environment ON api_keys (environment_id);

CREATE TABLE members (
  id         TEXT PRIMARY KEY,
  tenant_id  TEXT NOT NULL REFERENCES tenants (id),
  email      TEXT NOT NULL,
  role       TEXT NOT NULL CHECK (role IN ('administrator', 'developer', 'viewer')),
  active     INTEGER NOT NULL CHECK (active IN (0, 1)),
  token_hash TEXT NOT NULL UNIQUE,
  created_at INTEGER NOT NULL
) STRICT;
CREATE INDEX members_tenant ON members (tenant_id);

CREATE TABLE service_accounts (
  id         TEXT PRIMARY KEY,
  tenant_id  TEXT NOT NULL REFERENCES tenants (id),
  email      TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  UNIQUE (tenant_id, email)
) STRICT;

CREATE TABLE transactions (
  id                 TEXT PRIMARY KEY,
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
  verified           INTEGER CHECK (verified IN (0, 1)),
  refund_email       TEXT,
  created_at         INTEGER NOT NULL,
  completed_at       INTEGER,
  FOREIGN KEY (environment_id, tenant_id) REFERENCES environments (id, tenant_id),
  -- thirdPartyId is unique per tenant environment and operation (payout vs staking).
  -- NULLs are distinct, so payments and refunds without one never collide.
  UNIQUE (environment_id, type, third_party_id)
) STRICT;
CREATE INDEX transactions_user ON transactions (environment_id, user_id, created_at DESC);
CREATE INDEX transactions_order_number ON transactions (environment_id, order_number) WHERE order_number IS NOT NULL;
CREATE INDEX transactions_tx_hash ON transactions (environment_id, tx_hash) WHERE tx_hash IS NOT NULL;
CREATE INDEX transactions_order ON transactions (environment_id, order_id) WHERE order_id IS NOT NULL;

CREATE TABLE orders (
  id                     TEXT PRIMARY KEY,
  environment_id         TEXT NOT NULL REFERENCES environments (id),
  order_number           TEXT NOT NULL,
  merchant_reference     TEXT NOT NULL,
  amount_minor           INTEGER NOT NULL CHECK (amount_minor >= 0),
  asset_id               TEXT,
  network_id             TEXT,
  amount_base_units      TEXT,
  received_base_units    TEXT NOT NULL,
  overpayment_base_units TEXT,
  status                 TEXT NOT NULL,
  payment_status         TEXT NOT NULL,
  review_reason          TEXT,
  created_at             INTEGER NOT NULL,
  updated_at             INTEGER NOT NULL,
  UNIQUE (environment_id, order_number)
) STRICT;

-- The last order number handed out per environment (ORD-000001 is 1).
CREATE TABLE order_number_sequences (
  environment_id TEXT PRIMARY KEY REFERENCES environments (id),
  last_value     INTEGER NOT NULL CHECK (last_value >= 1)
) STRICT;

-- seq: monotonic, never reused (AUTOINCREMENT), the key of newest-first cursors.
CREATE TABLE events (
  seq                INTEGER PRIMARY KEY AUTOINCREMENT,
  id                 TEXT NOT NULL UNIQUE,
  environment_id     TEXT NOT NULL REFERENCES environments (id),
  type               TEXT NOT NULL,
  payload            TEXT NOT NULL,
  order_id           TEXT,
  merchant_reference TEXT,
  transaction_id     TEXT,
  created_at         INTEGER NOT NULL
) STRICT;
CREATE INDEX events_environment ON events (environment_id, seq DESC);
CREATE INDEX events_environment_type ON events (environment_id, type, seq DESC);

CREATE TABLE webhook_endpoints (
  id                    TEXT PRIMARY KEY,
  environment_id        TEXT NOT NULL REFERENCES environments (id),
  url                   TEXT NOT NULL,
  secret_enc            TEXT NOT NULL,
  active                INTEGER NOT NULL CHECK (active IN (0, 1)),
  version               INTEGER NOT NULL CHECK (version >= 0),
  last_test_delivery_id TEXT,
  created_at            INTEGER NOT NULL,
  updated_at            INTEGER NOT NULL,
  disabled_at           INTEGER
) STRICT;
-- At most one active endpoint per environment.
CREATE UNIQUE INDEX webhook_endpoints_one_active ON webhook_endpoints (environment_id) WHERE active = 1;
CREATE INDEX webhook_endpoints_environment ON webhook_endpoints (environment_id, created_at DESC);

CREATE TABLE deliveries (
  seq                INTEGER PRIMARY KEY AUTOINCREMENT,
  id                 TEXT NOT NULL UNIQUE,
  environment_id     TEXT NOT NULL REFERENCES environments (id),
  event_id           TEXT NOT NULL REFERENCES events (id),
  kind               TEXT NOT NULL CHECK (kind IN ('order_event', 'webhook_test', 'payout_callback')),
  endpoint_id        TEXT REFERENCES webhook_endpoints (id),
  endpoint_version   INTEGER,
  url                TEXT NOT NULL,
  state              TEXT NOT NULL CHECK (state IN ('pending', 'delivered', 'failed', 'disabled')),
  attempt_count      INTEGER NOT NULL CHECK (attempt_count >= 0),
  cycle              INTEGER NOT NULL CHECK (cycle >= 0),
  next_attempt_at    INTEGER,
  lease_owner        TEXT,
  lease_expires_at   INTEGER,
  order_id           TEXT,
  merchant_reference TEXT,
  transaction_id     TEXT,
  created_at         INTEGER NOT NULL,
  updated_at         INTEGER NOT NULL,
  delivered_at       INTEGER,
  CHECK ((lease_owner IS NULL) = (lease_expires_at IS NULL))
) STRICT;
-- The queue: pending deliveries by due time.
CREATE INDEX deliveries_due ON deliveries (next_attempt_at) WHERE state = 'pending';
-- Live leases, counted per destination when claiming.
CREATE INDEX deliveries_leased ON deliveries (lease_expires_at) WHERE lease_owner IS NOT NULL;
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
  started_at          INTEGER NOT NULL,
  duration_ms         INTEGER NOT NULL CHECK (duration_ms >= 0),
  signature_timestamp INTEGER NOT NULL,
  outcome             TEXT NOT NULL CHECK (outcome IN ('response', 'error')),
  status_code         INTEGER,
  error_class         TEXT,
  response_body       TEXT,
  success             INTEGER NOT NULL CHECK (success IN (0, 1)),
  PRIMARY KEY (delivery_id, cycle, number)
) STRICT;
