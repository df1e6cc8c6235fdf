-- 0018_endpoint_health: an endpoint's health (issue 69). consecutive_failures and
-- failing_since count the current run of failed attempts (all its deliveries), reset by a
-- success; failing_notified_at says webhook_endpoint.failing was sent for this run (once);
-- disabled_reason says why it was disabled (requested, gone, failing; NULL while active, and
-- for endpoints disabled before this release: read as requested). Expand only: nullable
-- columns and one with a constant default, which older code's inserts leave out and its
-- statements never name.
ALTER TABLE webhook_endpoints ADD COLUMN disabled_reason TEXT;
ALTER TABLE webhook_endpoints ADD COLUMN failing_since INTEGER;
ALTER TABLE webhook_endpoints ADD COLUMN consecutive_failures INTEGER NOT NULL DEFAULT 0;
ALTER TABLE webhook_endpoints ADD COLUMN failing_notified_at INTEGER;
