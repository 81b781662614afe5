-- What a take and an agent's call look up on every call, found by index
-- rather than by reading the table: a snapshot by its backend's reference (a
-- take's parent), and the boxes a thread has a workspace on (an agent's call
-- checks whether its turns are held).

-- +goose Up
CREATE INDEX snapshots_backend_ref ON snapshots (backend_id, ref) WHERE ref IS NOT NULL;
CREATE INDEX boxes_workspaces ON boxes USING gin ((presence -> 'workspaces') jsonb_path_ops);

-- +goose Down
DROP INDEX boxes_workspaces;
DROP INDEX snapshots_backend_ref;
