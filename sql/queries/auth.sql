-- The install, the owner's sign-in, sessions, the one-time set-up link and
-- personal API tokens. Tokens are looked up by their SHA-256 hash.

-- name: InstallID
INSERT INTO install (install_id) VALUES ($1)
ON CONFLICT (id) DO UPDATE SET install_id = install.install_id
RETURNING install_id;

-- name: OwnerPasswordHash
SELECT password_hash FROM owner;

-- name: OwnerExists
SELECT EXISTS (SELECT 1 FROM owner);

-- name: SetOwnerPassword
INSERT INTO owner (password_hash) VALUES ($1)
ON CONFLICT (id) DO UPDATE SET password_hash = EXCLUDED.password_hash, updated_at = now();

-- name: CreateOwnerIfNone
INSERT INTO owner (password_hash) VALUES ($1) ON CONFLICT (id) DO NOTHING;

-- name: OwnerTimeZone
SELECT time_zone FROM owner;

-- name: CreateSetupLink
INSERT INTO setup_links (token_hash, expires_at) VALUES ($1, $2);

-- name: UseSetupLink
UPDATE setup_links SET used_at = now()
WHERE token_hash = $1 AND used_at IS NULL AND expires_at > now()
RETURNING true;

-- name: SetupLinkUsable
SELECT EXISTS (SELECT 1 FROM setup_links WHERE token_hash = $1 AND used_at IS NULL AND expires_at > now());

-- name: CreateSession
INSERT INTO sessions (token_hash, expires_at, user_agent) VALUES ($1, $2, $3);

-- name: TouchSession
UPDATE sessions SET last_seen = now(), expires_at = greatest(expires_at, $2)
WHERE token_hash = $1 AND expires_at > now()
RETURNING true;

-- name: DeleteSession
DELETE FROM sessions WHERE token_hash = $1;

-- name: DeleteExpired
WITH s AS (DELETE FROM sessions WHERE expires_at <= now() RETURNING 1),
     l AS (DELETE FROM setup_links WHERE expires_at <= now() - interval '1 day' RETURNING 1)
SELECT (SELECT count(*) FROM s) + (SELECT count(*) FROM l);

-- name: CreateAPIToken
INSERT INTO api_tokens (id, name, token_hash) VALUES ($1, $2, $3);

-- name: OwnerTokenByHash
UPDATE api_tokens SET last_used_at = now()
WHERE token_hash = $1 AND revoked_at IS NULL
RETURNING id;

-- name: ListAPITokens
SELECT id, name, created_at, last_used_at FROM api_tokens WHERE revoked_at IS NULL ORDER BY created_at DESC;

-- name: RevokeAPIToken
UPDATE api_tokens SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL;
