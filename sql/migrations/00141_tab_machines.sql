-- The Machines tab's pages: live boxes and released ones, each by name, read
-- a page at a time through these (TabMachines), not every box.

-- +goose Up
CREATE INDEX boxes_machines ON boxes (name, id) WHERE released_at IS NULL AND state <> 'trashed';
CREATE INDEX boxes_released ON boxes (name, id) WHERE released_at IS NOT NULL AND state <> 'trashed';

-- +goose Down
DROP INDEX boxes_released;
DROP INDEX boxes_machines;
