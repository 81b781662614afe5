-- The trash and reset. A released box waits in the trash, stopped, with its
-- snapshots, until its window ends or the person empties it; a box remembers
-- the template it was made from, so a reset makes it fresh again.

-- +goose Up
ALTER TABLE boxes DROP CONSTRAINT boxes_state_check;
ALTER TABLE boxes ADD CONSTRAINT boxes_state_check
    CHECK (state IN ('making', 'ready', 'releasing', 'released', 'trashed'));

CREATE TABLE box_trash (
    box_id          text        PRIMARY KEY REFERENCES boxes (id) ON DELETE CASCADE,
    release_op      text        NOT NULL,          -- the release that moved it here
    trashed_at      timestamptz NOT NULL,
    until           timestamptz NOT NULL,          -- the sweep empties it after this
    final_snapshot  text,                          -- the snapshot taken at the release, or null
    final_words     text        NOT NULL DEFAULT '', -- why there is none, in words
    was_running     boolean     NOT NULL DEFAULT false,
    guest_state     jsonb       NOT NULL DEFAULT '{}', -- what the backend set aside (onboot)
    by_kind         text        NOT NULL,
    by_thread_id    text
);
CREATE INDEX box_trash_until ON box_trash (until);

CREATE TABLE box_made_from (
    box_id    text PRIMARY KEY REFERENCES boxes (id) ON DELETE CASCADE,
    template  text NOT NULL DEFAULT '',   -- a box template's name, or '' (made from parts)
    source    text NOT NULL DEFAULT '',   -- the backend's own source, as the box was made
    command   text NOT NULL DEFAULT ''    -- the process a local box runs, as it was made
);

-- +goose Down
DROP TABLE box_made_from;
DROP TABLE box_trash;
UPDATE boxes SET state = 'released' WHERE state = 'trashed';
ALTER TABLE boxes DROP CONSTRAINT boxes_state_check;
ALTER TABLE boxes ADD CONSTRAINT boxes_state_check
    CHECK (state IN ('making', 'ready', 'releasing', 'released'));
