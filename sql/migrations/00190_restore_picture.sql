-- A restore's undo picture: captured before the stop, so it shows the box as
-- the undo will bring it back, and held here until the undo is taken. The
-- restore's job snoozes on its provider tasks between the two (the stop, the
-- undo's own task), and what a worker held in memory does not outlast a
-- snooze.

-- +goose Up
CREATE TABLE restore_pictures (
    operation_id text PRIMARY KEY REFERENCES operations (id) ON DELETE CASCADE,
    jpeg         bytea,
    width        integer     NOT NULL DEFAULT 0,
    height       integer     NOT NULL DEFAULT 0,
    failed       text,
    taken_at     timestamptz NOT NULL
);

-- +goose Down
DROP TABLE restore_pictures;
