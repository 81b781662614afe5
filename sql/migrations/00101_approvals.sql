-- Requests for the person's word: an agent's restore of an execution machine,
-- or of its own box when "Agents may restore their own boxes" is off, waits
-- here for the person's approval, bound to the plan it showed.

-- +goose Up
CREATE TABLE approvals (
    id           text        PRIMARY KEY,          -- ap and 12
    box_id       text        NOT NULL REFERENCES boxes (id),
    snapshot_id  text        NOT NULL,
    thread_id    text        NOT NULL,             -- the asking agent's thread
    plan         text        NOT NULL,             -- the plan's fingerprint
    goes         text[]      NOT NULL DEFAULT '{}', -- what else goes, as the request showed it
    execution    boolean     NOT NULL DEFAULT false, -- a box threads run on: its turns are held
    state        text        NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'approved', 'declined', 'expired')),
    asks         integer     NOT NULL DEFAULT 1,
    asked_at     timestamptz NOT NULL,
    expires_at   timestamptz NOT NULL,
    answered_at  timestamptz,
    operation_id text,
    answer       text,                             -- what the agent's next call is told
    reported     boolean     NOT NULL DEFAULT false
);
CREATE INDEX approvals_pending ON approvals (state, box_id);
CREATE INDEX approvals_thread ON approvals (thread_id) WHERE NOT reported;

-- +goose Down
DROP TABLE approvals;
