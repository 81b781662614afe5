-- Moving snapshots (app/snapshots move.go, share.go): export and import with
-- ancestry, and share codes.

-- name: MoveBoxInsert :one
INSERT INTO boxes (id, name, kind, system, backend_id, host, guest_ref, state, owner_host)
VALUES ($1, $2, $3, $4, $5, $6, $7, 'making', sqlc.narg(owner_host))
RETURNING *;

-- name: MoveBoxGuest :exec
-- The guest a backend made for a box an import is making (a Docker box's
-- container is named for the box, not the box's ID alone).
UPDATE boxes SET guest_ref = $2, host = $3 WHERE id = $1 AND state = 'making';

-- name: MoveBoxReady :exec
UPDATE boxes SET state = 'ready' WHERE id = $1 AND state = 'making';

-- name: MoveBoxLiveName :one
SELECT EXISTS (SELECT 1 FROM boxes WHERE name = $1 AND state <> 'released');

-- name: MoveSnapshotInsert :one
INSERT INTO snapshots (id, box_id, box_name, box_kind, box_system, backend_id, host, storage, guest, name, note,
    taken_at, captured_at, by_kind, by_why, scope, holds, owner_kind, fork_safe, parent_id, ref, state)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'current', $9, $10, $11, $12, $13, $14, 'box', $15, 'person', $16, $17, $18, 'ready')
ON CONFLICT (id) DO NOTHING
RETURNING *;

-- name: MoveShareInsert :one
INSERT INTO shares (id, code_hash, box_id, snapshot_id, copy_id, copy_box_id, removed, home_extra, created_at, expires_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
RETURNING *;

-- name: MoveShareByHash :one
SELECT * FROM shares WHERE code_hash = $1;

-- name: MoveSharesOfSnapshot :many
SELECT * FROM shares WHERE snapshot_id = $1 ORDER BY created_at DESC;

-- name: MoveShares :many
SELECT * FROM shares ORDER BY created_at DESC;

-- name: MoveShareRevoke :one
UPDATE shares SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL
RETURNING *;

-- name: MoveShareRedeemed :exec
UPDATE shares SET redeemed = redeemed + 1, redeemed_at = $2 WHERE id = $1;

-- name: MoveSharesLock :exec
-- Held to the end of the transaction that counts the live codes and adds
-- one, so two makes at once never pass the limit together.
SELECT pg_advisory_xact_lock(hashtextextended('boxsnap share codes', 0));

-- name: MoveSharesLive :one
SELECT count(*) FROM shares WHERE revoked_at IS NULL AND expires_at > sqlc.arg(now)::timestamptz;
