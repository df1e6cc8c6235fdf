-- 0016_destination_pace: the sender listens to receivers (issue 69). Expand only.
-- - webhook_endpoints.max_per_second: the endpoint's optional rate cap (NULL: none), read by
--   the claim with the endpoint's secret; older code never names it and sends uncapped.
-- - destination_pauses: a destination (deliveries.destination: 'e:' endpoint id, or 'u:' url)
--   that answered 429 or 503 with Retry-After, or whose rate cap holds its next send back, is
--   claimed by no instance before paused_until (queue-sql.ts: NOT_PAUSED). Older code never
--   reads it, so it ignores the pause until upgraded. Rows in the past are inert (one per
--   destination, overwritten in place); every claim reads the live ones by the index.
ALTER TABLE webhook_endpoints ADD COLUMN max_per_second INTEGER;
CREATE TABLE destination_pauses (
  destination  TEXT PRIMARY KEY,
  paused_until INTEGER NOT NULL
);
CREATE INDEX destination_pauses_until ON destination_pauses (paused_until);
