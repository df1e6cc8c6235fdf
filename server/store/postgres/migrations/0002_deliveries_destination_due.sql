-- Pending deliveries per destination in due order: a claim steps from one destination to the
-- next (a loose index scan) instead of reading past the backlog of a destination that is at
-- its limit.
CREATE INDEX deliveries_destination_due ON deliveries (destination, next_attempt_at, seq) WHERE state = 'pending';
