-- 0012_prune_cursor: where pruning's round-robin over environments stands (issue 60), kept in
-- the database instead of each process's memory, so that a lap survives a restart and every
-- instance of one database shares it. One row; a batch reads and moves it in its own
-- transaction (on PostgreSQL under the pruner's advisory lock). after_id: the last environment
-- id of the previous batch ('' at the start of a lap); dirty: 1 when a batch of this lap left
-- expired rows behind (the pass goes on for another lap).
CREATE TABLE prune_cursor (
  id       INTEGER PRIMARY KEY CHECK (id = 1),
  after_id TEXT NOT NULL,
  dirty    INTEGER NOT NULL CHECK (dirty IN (0, 1))
);
INSERT INTO prune_cursor (id, after_id, dirty) VALUES (1, '', 0);
