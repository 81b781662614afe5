-- The content ledger's snapshots and their bases (package
-- app/contentledger): a snapshot names only what its base does not hold,
-- and drops what its base holds that it does not; a base deleted hands
-- both down to its children.

-- name: ContentBaseHeld :one
-- A take naming over a base locks the base's row until it commits, so
-- the base cannot be deleted (handed down) meanwhile.
SELECT held, digest FROM content_snapshots WHERE snapshot_id = $1 FOR KEY SHARE;

-- name: ContentSnapshotAdd :execrows
INSERT INTO content_snapshots (snapshot_id, base_id, held, digest)
VALUES (@snapshot_id, sqlc.narg(base_id), @held, @digest)
ON CONFLICT DO NOTHING;

-- name: ContentDrop :exec
INSERT INTO content_drops (snapshot_id, key)
SELECT @snapshot_id::text, k FROM unnest(@keys::text[]) AS k
ON CONFLICT DO NOTHING;

-- name: ContentSnapshotOf :one
SELECT base_id, held, digest FROM content_snapshots WHERE snapshot_id = $1;

-- name: ContentDropsOf :many
SELECT key FROM content_drops WHERE snapshot_id = $1 ORDER BY key;

-- name: ContentHandDownLock :one
-- Hand-downs run one at a time (a transaction's advisory lock), so two
-- deletes of a base and its child never lock each other's rows in turn;
-- then the base's row is locked against takes naming over it.
WITH one AS (SELECT pg_advisory_xact_lock(hashtextextended('boxsnap content hand-down', 0)))
SELECT s.base_id FROM content_snapshots s, one WHERE s.snapshot_id = $1 FOR UPDATE OF s;

-- name: ContentHandDropsDown :exec
-- A child drops what the deleted snapshot dropped and the child does not
-- name back.
INSERT INTO content_drops (snapshot_id, key)
SELECT c.snapshot_id, d.key
FROM content_snapshots c JOIN content_drops d ON d.snapshot_id = @snapshot_id::text
WHERE c.base_id = @snapshot_id::text
  AND NOT EXISTS (SELECT 1 FROM content_names n WHERE n.snapshot_id = c.snapshot_id AND n.key = d.key)
ON CONFLICT DO NOTHING;

-- name: ContentUnnameDropped :exec
-- What a child names back that the deleted snapshot dropped, the new base
-- holds: the child names it no more.
DELETE FROM content_names n
USING content_snapshots c, content_drops d
WHERE c.base_id = @snapshot_id::text AND n.snapshot_id = c.snapshot_id
  AND d.snapshot_id = @snapshot_id::text AND d.key = n.key;

-- name: ContentHandNamesDown :exec
-- A child names what the deleted snapshot named and the child did not drop.
INSERT INTO content_names (snapshot_id, key)
SELECT c.snapshot_id, n.key
FROM content_snapshots c JOIN content_names n ON n.snapshot_id = @snapshot_id::text
WHERE c.base_id = @snapshot_id::text
  AND NOT EXISTS (SELECT 1 FROM content_drops d WHERE d.snapshot_id = c.snapshot_id AND d.key = n.key)
ON CONFLICT DO NOTHING;

-- name: ContentUndropNamed :exec
-- What a child dropped of the deleted snapshot's names, the new base never
-- held: the child drops it no more.
DELETE FROM content_drops d
USING content_snapshots c, content_names n
WHERE c.base_id = @snapshot_id::text AND d.snapshot_id = c.snapshot_id
  AND n.snapshot_id = @snapshot_id::text AND n.key = d.key;

-- name: ContentRebase :exec
UPDATE content_snapshots SET base_id = sqlc.narg(new_base)
WHERE base_id = @snapshot_id::text;

-- name: ContentForgetDrops :exec
DELETE FROM content_drops WHERE snapshot_id = $1;

-- name: ContentForgetSnapshot :exec
DELETE FROM content_snapshots WHERE snapshot_id = $1;
