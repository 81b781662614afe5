-- The content store's packs (package app/contentledger): a pack claimed
-- before its put, recorded with where each object lies in it, located on
-- a fetch, and freed by the sweep once nothing stored or claimed lies in it.

-- name: ContentPackClaim :exec
INSERT INTO content_packs (key, size, claimed_until)
VALUES (@key, @size, now() + make_interval(secs => @grace_seconds::float8));

-- name: ContentPackStored :exec
-- A stored pack's claim ends: what lies in it holds it from now on.
UPDATE content_packs SET stored = true, claimed_until = NULL WHERE key = @key;

-- name: ContentPackPlace :exec
-- The objects a pack's put carried are stored, and lie in it. One already
-- stored (another take put it meanwhile) stays where it lies: a fetch
-- that located it there may rely on that pack while it is stored.
UPDATE content_objects o
SET stored = true, pack = @pack::text, pack_offset = u.off, pack_length = u.len
FROM (SELECT unnest(@keys::text[]) AS key, unnest(@offsets::bigint[]) AS off, unnest(@lengths::bigint[]) AS len) AS u
WHERE o.key = u.key AND NOT o.stored;

-- name: ContentPackLocate :many
SELECT o.key, o.pack::text AS pack, o.pack_offset::bigint AS pack_offset, o.pack_length::bigint AS pack_length, p.size AS pack_size
FROM content_objects o JOIN content_packs p ON p.key = o.pack
WHERE o.key = ANY (@keys::text[]) AND p.stored;

-- name: ContentUnpacked :many
-- Of keys, those that are objects of their own in the bucket.
SELECT key FROM content_objects WHERE key = ANY (@keys::text[]) AND pack IS NULL;

-- name: ContentPacksFree :many
-- Packs no stored or claimed object lies in, their own claim run out.
SELECT p.key FROM content_packs p
WHERE (p.claimed_until IS NULL OR p.claimed_until < now())
  AND NOT EXISTS (SELECT 1 FROM content_objects o
                  WHERE o.pack = p.key
                    AND (o.stored OR o.claimed_until >= now()))
ORDER BY p.key
LIMIT @max_keys
FOR UPDATE OF p SKIP LOCKED;

-- name: ContentPackForget :exec
DELETE FROM content_packs WHERE key = ANY (@keys::text[]);

-- name: ContentPackWaste :one
-- The packs' bytes, and how many of them stored objects hold: the rest is
-- the waste of freed objects in packs kept for the others.
SELECT (SELECT count(*) FROM content_packs WHERE stored)::bigint AS packs,
       COALESCE((SELECT sum(size) FROM content_packs WHERE stored), 0)::bigint AS bytes,
       COALESCE((SELECT sum(o.pack_length) FROM content_objects o
                 WHERE o.pack IS NOT NULL AND o.stored), 0)::bigint AS held_bytes;
