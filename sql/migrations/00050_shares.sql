-- +goose Up
-- Share codes: a code hands out a copy of one snapshot with secrets removed.
-- Only the code's SHA-256 is kept; the code itself is shown once. The copy is
-- made from the snapshot when the code is redeemed, under the ID fixed here,
-- so redeeming twice on one install finds the box it made.
CREATE TABLE shares (
    id          text PRIMARY KEY,                 -- sh and 12
    code_hash   bytea       NOT NULL UNIQUE,
    box_id      text        NOT NULL REFERENCES boxes (id),
    snapshot_id text        NOT NULL REFERENCES snapshots (id) ON DELETE CASCADE,
    copy_id     text        NOT NULL,             -- the scrubbed copy's snapshot ID
    copy_box_id text        NOT NULL,             -- the box a redeem makes
    removed     text[]      NOT NULL DEFAULT '{}', -- what the copy leaves out
    home_extra  text[]      NOT NULL DEFAULT '{}', -- the settings' own paths when it was made
    created_at  timestamptz NOT NULL DEFAULT now(),
    expires_at  timestamptz NOT NULL,
    revoked_at  timestamptz,
    redeemed    integer     NOT NULL DEFAULT 0,
    redeemed_at timestamptz
);
CREATE INDEX shares_snapshot ON shares (snapshot_id);

-- +goose Down
DROP TABLE shares;
