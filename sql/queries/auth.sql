-- The install, the owner's sign-in, sessions, the one-time set-up link and
-- personal API tokens. Tokens are looked up by their SHA-256 hash.

-- name: InstallID :one
INSERT INTO install (install_id) VALUES (@new_id)
ON CONFLICT (id) DO UPDATE SET install_id = install.install_id
RETURNING install_id;

-- name: OwnerPasswordHash :one
SELECT password_hash FROM owner;

-- name: OwnerExists :one
SELECT EXISTS (SELECT 1 FROM owner);

-- name: SetOwnerPassword :exec
INSERT INTO owner (password_hash) VALUES ($1)
ON CONFLICT (id) DO UPDATE SET password_hash = EXCLUDED.password_hash, updated_at = now();

-- name: CreateOwnerIfNone :execrows
INSERT INTO owner (password_hash) VALUES ($1) ON CONFLICT (id) DO NOTHING;

-- name: OwnerTimeZone :one
SELECT time_zone FROM owner;

-- name: CreateSetupLink :exec
INSERT INTO setup_links (token_hash, expires_at) VALUES ($1, $2);

-- name: UseSetupLink :one
UPDATE setup_links SET used_at = now()
WHERE token_hash = $1 AND used_at IS NULL AND expires_at > now()
RETURNING true;

-- name: SetupLinkUsable :one
SELECT EXISTS (SELECT 1 FROM setup_links WHERE token_hash = $1 AND used_at IS NULL AND expires_at > now());

-- name: CreateSession :exec
INSERT INTO sessions (token_hash, expires_at, user_agent) VALUES ($1, $2, $3);

-- name: TouchSession :one
UPDATE sessions SET last_seen = now(), expires_at = greatest(expires_at, $2)
WHERE token_hash = $1 AND expires_at > now()
RETURNING true;

-- name: DeleteSession :exec
DELETE FROM sessions WHERE token_hash = $1;

-- name: DeleteExpired :one
WITH s AS (DELETE FROM sessions WHERE expires_at <= now() RETURNING 1),
     l AS (DELETE FROM setup_links WHERE expires_at <= now() - interval '1 day' RETURNING 1)
SELECT ((SELECT count(*) FROM s) + (SELECT count(*) FROM l))::bigint;

-- name: CreateAPIToken :exec
INSERT INTO api_tokens (id, name, token_hash) VALUES ($1, $2, $3);

-- name: OwnerTokenByHash :one
UPDATE api_tokens SET last_used_at = now()
WHERE token_hash = $1 AND revoked_at IS NULL
RETURNING id;

-- name: ListAPITokens :many
SELECT id, name, created_at, last_used_at FROM api_tokens WHERE revoked_at IS NULL ORDER BY created_at DESC;

-- name: RevokeAPIToken :exec
UPDATE api_tokens SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL;
