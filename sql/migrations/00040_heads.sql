-- Ancestry and heads (microsandbox-snapshot-groups.txt, "The head moves
-- forward, not sideways by surprise"): a snapshot records what it was taken
-- from, the box's head at that moment; a box records its head, the snapshot
-- its current state descends from. The head moves forward by itself on a take
-- and moves back only by a restore.

-- +goose Up
ALTER TABLE snapshots ADD COLUMN parent_id text; -- the box's head when it was taken; null: not known
ALTER TABLE boxes ADD COLUMN head_id text;       -- the snapshot the box's state descends from; null: none yet
CREATE INDEX snapshots_parent ON snapshots (parent_id) WHERE parent_id IS NOT NULL;

-- +goose Down
DROP INDEX snapshots_parent;
ALTER TABLE boxes DROP COLUMN head_id;
ALTER TABLE snapshots DROP COLUMN parent_id;
