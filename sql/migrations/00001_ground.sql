-- The ground floor: the install, its one owner, the owner's sessions, the
-- one-time set-up link and personal API tokens. Secrets are stored hashed.

-- +goose Up
CREATE TABLE install (
    id          boolean PRIMARY KEY DEFAULT true CHECK (id),
    install_id  text        NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE owner (
    id             boolean PRIMARY KEY DEFAULT true CHECK (id),
    password_hash  text        NOT NULL,
    time_zone      text        NOT NULL DEFAULT 'UTC',
    created_at     timestamptz NOT NULL DEFAULT now(),
    updated_at     timestamptz NOT NULL DEFAULT now()
);

-- A one-time link that sets the owner's password on first visit. Only a hash
-- of its token is kept; used_at makes it work once.
CREATE TABLE setup_links (
    token_hash  bytea PRIMARY KEY,
    created_at  timestamptz NOT NULL DEFAULT now(),
    expires_at  timestamptz NOT NULL,
    used_at     timestamptz
);

-- Server-side sessions of the signed-in owner; the cookie holds the token,
-- the table its hash.
CREATE TABLE sessions (
    token_hash  bytea PRIMARY KEY,
    created_at  timestamptz NOT NULL DEFAULT now(),
    last_seen   timestamptz NOT NULL DEFAULT now(),
    expires_at  timestamptz NOT NULL,
    user_agent  text        NOT NULL DEFAULT ''
);
CREATE INDEX sessions_expires_at ON sessions (expires_at);

-- The owner's personal API tokens, for the CLI: shown once, stored hashed.
CREATE TABLE api_tokens (
    id            text PRIMARY KEY,
    name          text        NOT NULL,
    token_hash    bytea       NOT NULL UNIQUE,
    created_at    timestamptz NOT NULL DEFAULT now(),
    last_used_at  timestamptz,
    revoked_at    timestamptz
);

-- +goose Down
DROP TABLE api_tokens;
DROP TABLE sessions;
DROP TABLE setup_links;
DROP TABLE owner;
DROP TABLE install;
