-- Box templates: what the owner makes available for new boxes. An agent makes
-- a box only from one of these, by name; it never gives a command, a host
-- path, an adopt reference or a backend reference itself.

-- +goose Up
CREATE TABLE box_templates (
    name          text PRIMARY KEY,             -- the machine rule for names
    backend_id    text        NOT NULL,         -- a configured backend's ID
    kind          text        NOT NULL,
    source        text        NOT NULL DEFAULT '', -- a folder name in the templates folder, a template VMID, an image
    command       text        NOT NULL DEFAULT '', -- the box's process (local backend), or none
    run_as        text        NOT NULL DEFAULT '', -- the unprivileged user the process runs as; '' is boxsnap's own
    env           jsonb       NOT NULL DEFAULT '{}', -- the whole environment of the process
    memory_bytes  bigint      NOT NULL DEFAULT 0,
    processes     integer     NOT NULL DEFAULT 0,
    open_files    integer     NOT NULL DEFAULT 0,
    has_screen    boolean     NOT NULL DEFAULT false,
    screen_url    text        NOT NULL DEFAULT '',
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now()
);

-- +goose Down
DROP TABLE box_templates;
