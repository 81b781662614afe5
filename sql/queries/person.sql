-- name: PersonGoneBackends :many
SELECT backend_id, count(*)::int AS snapshots, coalesce(sum(size_bytes), 0)::bigint AS bytes
FROM snapshots WHERE NOT (backend_id = ANY ($1::text[]))
GROUP BY backend_id ORDER BY backend_id;

-- name: PersonSnapshotsOfBackend :many
SELECT * FROM snapshots WHERE backend_id = $1 ORDER BY box_name, taken_at, id;

-- name: PersonSnapshotForget :execrows
DELETE FROM snapshots s WHERE s.id = $1 AND s.backend_id = $2
AND NOT EXISTS (SELECT 1 FROM operations o WHERE o.state IN ('running', 'unknown') AND s.id = ANY (o.snapshots));

-- name: PersonCeilingLock :exec
SELECT pg_advisory_xact_lock(hashtext('boxsnap-ceiling:' || sqlc.arg(backend_id)::text));

-- name: PersonPaidHeld :many
SELECT id, price, size_bytes FROM snapshots
WHERE backend_id = $1 AND price IS NOT NULL AND state <> 'failed';

-- name: PersonChargesSince :many
SELECT snapshot_id, name, price, size_bytes, held_from, held_until FROM snapshot_charges
WHERE backend_id = sqlc.arg(backend_id) AND (held_until IS NULL OR held_until > sqlc.arg(since)::timestamptz);
