-- +goose Up
-- An agent tool's answer to a call that carried a retry key (its request),
-- kept so the same key with the same arguments answers the first call's
-- answer, after a restart too, and the same key with other arguments is
-- refused. Only an answer that says what was done is kept: a refusal or a
-- "still running" leaves the key free to try again.
CREATE TABLE tool_answers (
    key        text PRIMARY KEY,                 -- the caller and its retry key
    tool       text        NOT NULL,
    args       text        NOT NULL,             -- a digest of the arguments as sent
    resolved   text        NOT NULL DEFAULT '',  -- a digest with the box and snapshot as IDs, when they were found
    status     integer     NOT NULL,
    body       bytea       NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);

-- +goose Down
DROP TABLE tool_answers;
