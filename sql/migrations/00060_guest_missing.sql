-- A box whose guest the reconcile found gone from its backend (removed
-- outside boxsnap, such as a container removed by hand), since when; the
-- reconcile says so once in the box's log and forgets it when the guest is
-- back.

-- +goose Up
CREATE TABLE guest_missing (
    box_id  text        PRIMARY KEY REFERENCES boxes (id) ON DELETE CASCADE,
    guest   text        NOT NULL,
    since   timestamptz NOT NULL
);

-- +goose Down
DROP TABLE guest_missing;
