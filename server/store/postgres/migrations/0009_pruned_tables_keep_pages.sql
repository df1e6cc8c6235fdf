-- 0009_pruned_tables_keep_pages: vacuum no longer truncates the tables the pruner empties
-- (issue 42). With a short retention the pruner can empty events, deliveries and attempts;
-- autovacuum then cut their files to 0 pages and recorded 0 rows. The next foreign-key
-- checks (deliveries -> events, attempts -> deliveries) were planned on a table of a few
-- pages, by a sequential scan, and each backend kept that plan while the table grew back:
-- the check on events read 53 buffers instead of 5 (pg_stat_statements, docs/benchmarks.md,
-- bench:pruner). Keeping the pages also spares the hot path the ACCESS EXCLUSIVE lock that
-- truncation takes, and the pages are reused by new rows: storage stays at the peak.
ALTER TABLE events SET (vacuum_truncate = off);
ALTER TABLE deliveries SET (vacuum_truncate = off);
ALTER TABLE delivery_attempts SET (vacuum_truncate = off);
ALTER TABLE delivery_leases SET (vacuum_truncate = off);
ALTER TABLE order_idempotency_keys SET (vacuum_truncate = off);
