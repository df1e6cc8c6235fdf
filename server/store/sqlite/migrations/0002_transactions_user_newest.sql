-- Newest-first listing of a user's transactions (ORDER BY created_at DESC, rowid DESC) straight
-- from the index: an index on created_at ascending is walked backwards, and its entries for one
-- created_at are in rowid order, so the tie-break needs no sort. The DESC index of 0001 made
-- SQLite sort every row of the user in a temporary B-tree to apply the rowid tie-break.
DROP INDEX transactions_user;
CREATE INDEX transactions_user ON transactions (environment_id, user_id, created_at);
