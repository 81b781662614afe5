-- The local backend's content store's ledger (package app/contentledger):
-- claims, what is stored, which snapshot names which object, and the
-- sweep's choice of what nothing names.

-- name: ContentClaim :many
INSERT INTO content_objects (key, claimed_until)
SELECT k, now() + make_interval(secs => @grace_seconds::float8) FROM unnest(@keys::text[]) AS k
ON CONFLICT (key) DO UPDATE SET claimed_until = GREATEST(content_objects.claimed_until, EXCLUDED.claimed_until)
RETURNING key, stored;

-- name: ContentStored :exec
UPDATE content_objects SET stored = true WHERE key = ANY (@keys::text[]);

-- name: ContentName :exec
INSERT INTO content_names (snapshot_id, key)
SELECT @snapshot_id::text, k FROM unnest(@keys::text[]) AS k
ON CONFLICT DO NOTHING;

-- name: ContentUnname :exec
DELETE FROM content_names WHERE snapshot_id = $1;

-- name: ContentUnstore :many
-- The sweep's first step: the objects it will delete are no longer
-- recorded stored, committed before the bucket is touched, so a take
-- that claims one later puts it again, even after a sweep killed half way.
UPDATE content_objects SET stored = false
WHERE key IN (
    SELECT o.key FROM content_objects o
    WHERE o.stored
      AND (o.claimed_until IS NULL OR o.claimed_until < now())
      AND NOT EXISTS (SELECT 1 FROM content_names n WHERE n.key = o.key)
    ORDER BY o.key
    LIMIT @max_keys
    FOR UPDATE OF o SKIP LOCKED)
RETURNING key;

-- name: ContentUnnamed :many
SELECT o.key FROM content_objects o
WHERE NOT o.stored
  AND (o.claimed_until IS NULL OR o.claimed_until < now())
  AND NOT EXISTS (SELECT 1 FROM content_names n WHERE n.key = o.key)
ORDER BY o.key
LIMIT @max_keys
FOR UPDATE OF o SKIP LOCKED;

-- name: ContentForget :exec
DELETE FROM content_objects WHERE key = ANY (@keys::text[]);

-- name: ContentNamedBy :many
SELECT key FROM content_names WHERE snapshot_id = $1 ORDER BY key;

-- name: ContentCounts :one
SELECT (SELECT count(*) FROM content_objects)::bigint AS objects,
       (SELECT count(*) FROM content_objects o WHERE NOT EXISTS (SELECT 1 FROM content_names n WHERE n.key = o.key))::bigint AS unnamed;
