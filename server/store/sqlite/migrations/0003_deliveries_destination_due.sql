-- Pending deliveries per destination in due order: a claim steps from one destination to the
-- next (a loose index scan) instead of reading past the backlog of a destination that is at
-- its limit. The expression is the queue's destination (queue.ts: DEST), written identically.
CREATE INDEX deliveries_destination_due ON deliveries (
  (CASE WHEN endpoint_id IS NOT NULL THEN 'e:' || endpoint_id ELSE 'u:' || url END), next_attempt_at
) WHERE state = 'pending';
