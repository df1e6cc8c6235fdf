-- 0011_rolling_upgrades: schema_migrations records each migration's name and whether code of
-- the release before it keeps working once it has run (compat.json), so that older code (a
-- release rolled back) accepts a schema whose newer migrations are all expand and refuses a
-- contract one by name. Older rows are filled in by the code that applies this migration, in
-- its transaction. PostgreSQL's migration of this name also adds the instances table (its
-- heartbeats); one process serves a SQLite database, so it has no use here.
ALTER TABLE schema_migrations ADD COLUMN name TEXT;
ALTER TABLE schema_migrations ADD COLUMN compat TEXT CHECK (compat IN ('expand', 'contract'));
