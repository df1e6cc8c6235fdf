-- 0015_endpoint_event_types: several endpoints per environment, each subscribed to event
-- types (issue 68). event_types is a JSON array (text) of the order event types the endpoint
-- receives, NULL for every type: every existing endpoint keeps receiving everything; a nullable
-- column, so no rewrite. The rule "one active endpoint per environment" becomes "no two active
-- endpoints of an environment share a URL"; the limit on how many (MAX_ACTIVE_ENDPOINTS) is the
-- domain's, checked in the creating transaction under a lock of the environment's row.
ALTER TABLE webhook_endpoints ADD COLUMN event_types TEXT;
DROP INDEX webhook_endpoints_one_active;
CREATE UNIQUE INDEX webhook_endpoints_active_url ON webhook_endpoints (environment_id, url) WHERE active;
