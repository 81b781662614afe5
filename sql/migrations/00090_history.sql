-- Automatic history: a snapshot boxsnap took by itself because the box
-- changed is automatic until Save makes it an ordinary one; each box may turn
-- automatic snapshots on or off and bound what its history holds; the check
-- remembers whether it last saw the box running, so a box that stops gets one
-- more.

-- +goose Up
ALTER TABLE snapshots ADD COLUMN automatic boolean NOT NULL DEFAULT false;
CREATE INDEX snapshots_automatic ON snapshots (box_id, taken_at DESC) WHERE automatic;

CREATE TABLE box_history (
    box_id     text        PRIMARY KEY REFERENCES boxes (id) ON DELETE CASCADE,
    automatic  boolean,                 -- null: the backend's setting
    max_bytes  bigint,                  -- null: the setting's default
    running    boolean     NOT NULL DEFAULT false, -- what the last check saw
    checked_at timestamptz
);

-- +goose Down
DROP TABLE box_history;
DROP INDEX snapshots_automatic;
ALTER TABLE snapshots DROP COLUMN automatic;
