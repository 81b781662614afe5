-- The content store's repack (package app/contentledger): packs whose
-- stored objects hold under half their bytes have those objects rewritten
-- into a new pack, moved there in one transaction, and the old pack kept
-- for the ledger's grace (a fetch may have located an object in it just
-- before), then freed by the sweep as any pack nothing lies in.

-- name: ContentRepackLock :one
-- One repack at a time across every process: a session's advisory lock,
-- held while the repack reads and puts, gone with the session on a kill.
SELECT pg_try_advisory_lock(hashtextextended('boxsnap content repack', 0));

-- name: ContentRepackUnlock :exec
SELECT pg_advisory_unlock(hashtextextended('boxsnap content repack', 0));

-- name: ContentPacksSparse :many
-- Stored packs, not claimed nor kept for readers, whose stored objects
-- with a bound on their index lines (index_line bytes each, and
-- index_tail for the trailer) hold less than half their bytes. A pack a
-- repack made holds its objects and their index alone, so it is never
-- sparse when made.
SELECT p.key, p.size,
       COALESCE(sum(o.pack_length), 0)::bigint AS live
FROM content_packs p JOIN content_objects o ON o.pack = p.key AND o.stored
WHERE p.stored AND (p.claimed_until IS NULL OR p.claimed_until < now())
GROUP BY p.key, p.size
HAVING 2 * (sum(o.pack_length) + count(*) * sqlc.arg(index_line)::bigint + sqlc.arg(index_tail)::bigint) < p.size
ORDER BY p.key
LIMIT @max_keys;

-- name: ContentPacksLive :many
-- The stored objects lying in packs, in each pack in order.
SELECT key, pack::text AS pack, pack_offset::bigint AS pack_offset, pack_length::bigint AS pack_length
FROM content_objects
WHERE pack = ANY (@packs::text[]) AND stored
ORDER BY pack, pack_offset, key;

-- name: ContentPacksLockForRepack :many
-- The old packs' rows, locked while their objects move, so a sweep
-- deleting packs (it skips locked rows) never takes one meanwhile.
SELECT key FROM content_packs WHERE key = ANY (@packs::text[]) ORDER BY key FOR UPDATE;

-- name: ContentPackMove :execrows
-- Objects still stored where the repack read them now lie in the new
-- pack; one freed meanwhile stays unplaced in the old one.
UPDATE content_objects o
SET pack = @new_pack::text, pack_offset = u.off, pack_length = u.len
FROM (SELECT unnest(@keys::text[]) AS key, unnest(@old_packs::text[]) AS old,
             unnest(@offsets::bigint[]) AS off, unnest(@lengths::bigint[]) AS len) AS u
WHERE o.key = u.key AND o.pack = u.old AND o.stored;

-- name: ContentPackRepacked :exec
-- The new pack is stored, its size what its put carried; its claim ends.
UPDATE content_packs SET stored = true, claimed_until = NULL, size = @size WHERE key = @key;

-- name: ContentPacksRetire :exec
-- The old packs are kept for the grace, for a fetch that located an
-- object in one before the move; the sweep deletes them after it.
UPDATE content_packs SET claimed_until = now() + make_interval(secs => @grace_seconds::float8)
WHERE key = ANY (@packs::text[]);

-- name: ContentPackRecords :many
-- Every stored pack and the stored objects lying in it (an empty key for
-- a pack nothing lies in), for the doctor's check of the ledger against
-- each pack's own index.
SELECT p.key AS pack, p.size,
       COALESCE(o.key, '')::text AS key,
       COALESCE(o.pack_offset, 0)::bigint AS pack_offset,
       COALESCE(o.pack_length, 0)::bigint AS pack_length
FROM content_packs p LEFT JOIN content_objects o ON o.pack = p.key AND o.stored
WHERE p.stored
ORDER BY p.key, o.pack_offset, o.key;
