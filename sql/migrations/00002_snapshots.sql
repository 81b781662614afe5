-- The snapshot core: backends, threads, boxes with the presence the platform
-- reports, snapshots, operations (each change, recorded before it starts),
-- the box log, pictures in their own table, and settings.

-- +goose Up
CREATE TABLE backends (
    id          text PRIMARY KEY,
    kind        text        NOT NULL,            -- local, proxmox
    label       text        NOT NULL,
    config      jsonb       NOT NULL DEFAULT '{}', -- never a secret: secrets come from the environment
    simulated   boolean     NOT NULL DEFAULT false,
    created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE threads (
    id          text PRIMARY KEY,                 -- th and 12 letters and digits
    title       text        NOT NULL,
    token_hash  bytea       NOT NULL UNIQUE,      -- the agent's bearer token, hashed
    created_at  timestamptz NOT NULL DEFAULT now(),
    ended_at    timestamptz
);

CREATE TABLE boxes (
    id            text PRIMARY KEY,               -- bx and 12
    name          text        NOT NULL,
    kind          text        NOT NULL,           -- linux, linux-desktop, lxc, qemu, qemu-windows
    system        text        NOT NULL DEFAULT '',
    thread_id     text REFERENCES threads (id),   -- null: one of the owner's machines ("Your machine")
    backend_id    text        NOT NULL REFERENCES backends (id),
    host          text        NOT NULL DEFAULT '',
    guest_ref     text        NOT NULL,
    generation    integer     NOT NULL DEFAULT 1,
    has_screen    boolean     NOT NULL DEFAULT false,
    screen_url    text        NOT NULL DEFAULT '',
    -- presence the platform reports: {"workspaces":[{"thread":"th..","working":true,"runsOn":false}],
    -- "desktop":"the person","terminals":1}
    presence      jsonb       NOT NULL DEFAULT '{}',
    forked_from   jsonb,
    state         text        NOT NULL DEFAULT 'ready' CHECK (state IN ('making', 'ready', 'releasing', 'released')),
    created_at    timestamptz NOT NULL DEFAULT now(),
    released_at   timestamptz
);
CREATE UNIQUE INDEX boxes_live_name ON boxes (name) WHERE state <> 'released';
CREATE INDEX boxes_thread ON boxes (thread_id);

CREATE TABLE snapshots (
    id               text PRIMARY KEY,            -- sn and 12
    box_id           text        NOT NULL REFERENCES boxes (id),
    box_name         text        NOT NULL,        -- copied at the take
    box_kind         text        NOT NULL,
    box_system       text        NOT NULL DEFAULT '',
    box_thread_id    text,
    box_gone_at      timestamptz,
    box_gone_how     text,
    backend_id       text        NOT NULL REFERENCES backends (id),
    host             text        NOT NULL DEFAULT '',
    storage          text        NOT NULL DEFAULT '',
    storage_type     text        NOT NULL DEFAULT '',
    guest            text        NOT NULL DEFAULT 'current' CHECK (guest IN ('current', 'earlier', 'held-copy')),
    guest_generation integer     NOT NULL DEFAULT 1,
    name             text        NOT NULL,
    note             text,
    taken_at         timestamptz NOT NULL DEFAULT now(),
    captured_at      timestamptz,
    took_ms          integer,
    paused_ms        integer,
    by_kind          text        NOT NULL,        -- owner, agent, cli, boxsnap, outside, unknown
    by_thread_id     text,
    by_why           text,
    scope            text        NOT NULL DEFAULT 'box',
    holds            text        NOT NULL DEFAULT 'disk',
    excludes         text,
    size_bytes       bigint,
    size_meaning     text,
    price            jsonb,
    owner_kind       text        NOT NULL CHECK (owner_kind IN ('thread', 'person')),
    owner_thread_id  text,
    kept_until       timestamptz,
    kept_at          timestamptz,
    undo_of          text,                        -- the restore operation it is the undo of
    fork_safe        integer,
    depends_on       text[]      NOT NULL DEFAULT '{}',
    picture          text        NOT NULL DEFAULT 'none' CHECK (picture IN ('taken', 'none', 'off', 'failed')),
    ref              text        NOT NULL DEFAULT '',
    state            text        NOT NULL CHECK (state IN ('taking', 'ready', 'failed', 'incomplete', 'deleting', 'unavailable', 'lost')),
    error            text,
    found            boolean     NOT NULL DEFAULT false, -- found by the reconcile with no record
    missing_since    timestamptz,                 -- first successful listing without it
    state_at         timestamptz NOT NULL DEFAULT now(),
    UNIQUE (box_id, name)
);
CREATE INDEX snapshots_box ON snapshots (box_id, taken_at DESC);
CREATE INDEX snapshots_state ON snapshots (state);

CREATE TABLE operations (
    id           text PRIMARY KEY,                -- op and 12
    seq          bigserial   NOT NULL UNIQUE,     -- the order asked, per box
    request_key  text,                            -- the caller's request ID, scoped to the caller
    kind         text        NOT NULL,            -- take, restore, fork, delete, keep, unkeep, expiry, held-copy, adopt, release
    box_id       text REFERENCES boxes (id),
    generation   integer     NOT NULL DEFAULT 1,  -- the box's guest generation it was planned on
    target       text,                            -- the snapshot it acts on
    snapshots    text[]      NOT NULL DEFAULT '{}', -- pinned while the operation is running or unknown
    by_kind      text        NOT NULL,
    by_thread_id text,
    consent      jsonb,
    undo_id      text,
    guests       jsonb,
    step         text        NOT NULL DEFAULT 'waiting',
    task         jsonb,
    state        text        NOT NULL DEFAULT 'running' CHECK (state IN ('running', 'done', 'failed', 'unknown')),
    reserved     jsonb,
    params       jsonb       NOT NULL DEFAULT '{}',
    result       jsonb,
    error        text,
    observed     text,
    resumes      integer     NOT NULL DEFAULT 0,
    created_at   timestamptz NOT NULL DEFAULT now(),
    started_at   timestamptz,
    ended_at     timestamptz
);
CREATE UNIQUE INDEX operations_request ON operations (request_key) WHERE request_key IS NOT NULL;
CREATE INDEX operations_box_active ON operations (box_id, seq) WHERE state IN ('running', 'unknown');
CREATE INDEX operations_pins ON operations USING gin (snapshots) WHERE state IN ('running', 'unknown');

CREATE TABLE box_log (
    id           bigserial PRIMARY KEY,
    box_id       text        NOT NULL,
    at           timestamptz NOT NULL DEFAULT now(),
    kind         text        NOT NULL,
    actor_kind   text        NOT NULL,
    actor_thread text,
    actor_why    text,
    words        text        NOT NULL,
    snapshot_id  text,
    operation_id text,
    data         jsonb
);
CREATE INDEX box_log_box ON box_log (box_id, id DESC);

CREATE TABLE pictures (
    snapshot_id text PRIMARY KEY REFERENCES snapshots (id) ON DELETE CASCADE,
    jpeg        bytea       NOT NULL,
    width       integer     NOT NULL,
    height      integer     NOT NULL,
    taken_at    timestamptz NOT NULL,
    bytes       integer     NOT NULL
);

CREATE TABLE settings (
    key        text PRIMARY KEY,
    value      jsonb       NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
);

-- +goose Down
DROP TABLE settings;
DROP TABLE pictures;
DROP TABLE box_log;
DROP TABLE operations;
DROP TABLE snapshots;
DROP TABLE boxes;
DROP TABLE threads;
DROP TABLE backends;
