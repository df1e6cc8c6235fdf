-- 0011_rolling_upgrades: instances of two releases side by side on one database (issue 60).
-- - schema_migrations records each migration's name and whether code of the release before it
--   keeps working once it has run (compat.json): code older than a migration reads it here,
--   since it does not ship the file, and accepts an expand migration, refuses a contract one.
--   Older rows are filled in by the code that applies this migration, in its transaction.
-- - instances: each serving instance's heartbeat with the last migration its code knows
--   (code_version), so that a contract migration is never applied under an instance whose code
--   it would break (instances.ts). A row is alive while heartbeat_at is within the TTL; a clean
--   shutdown deletes it.
ALTER TABLE schema_migrations
  ADD COLUMN name   TEXT,
  ADD COLUMN compat TEXT CHECK (compat IN ('expand', 'contract'));

CREATE TABLE instances (
  id           TEXT PRIMARY KEY,
  code_version INTEGER NOT NULL CHECK (code_version >= 1),
  release      TEXT NOT NULL,
  host         TEXT NOT NULL,
  pid          INTEGER NOT NULL,
  started_at   BIGINT NOT NULL,
  heartbeat_at BIGINT NOT NULL
);
