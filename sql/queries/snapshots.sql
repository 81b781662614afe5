-- The snapshot core's queries (app/snapshots). Column lists follow the
-- structs' db tags; each query that returns a record returns all of it.

-- name: CoreBackendUpsert :exec
INSERT INTO backends (id, kind, label, simulated) VALUES ($1, $2, $3, $4)
ON CONFLICT (id) DO UPDATE SET kind = EXCLUDED.kind, label = EXCLUDED.label, simulated = EXCLUDED.simulated;

-- name: CoreThreadInsert :one
INSERT INTO threads (id, title, token_hash) VALUES ($1, $2, $3)
RETURNING id, title, created_at, ended_at;

-- name: CoreThreadByHash :one
SELECT id, title, created_at, ended_at FROM threads WHERE token_hash = $1 AND ended_at IS NULL;

-- name: CoreThreadByID :one
SELECT id, title, created_at, ended_at FROM threads WHERE id = $1;

-- name: CoreThreads :many
SELECT id, title, created_at, ended_at FROM threads ORDER BY created_at DESC;

-- name: CoreBoxInsert :one
-- owner_host: the host that made it, on a one-host backend (NULL: the
-- trigger boxes_owner_host gives a local box its host).
INSERT INTO boxes (id, name, kind, thread_id, backend_id, host, guest_ref, has_screen, screen_url, owner_host)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, sqlc.narg(owner_host))
RETURNING *;

-- name: CoreBoxByID :one
SELECT * FROM boxes WHERE id = $1;

-- name: CoreBoxByName :one
SELECT * FROM boxes WHERE name = $1 ORDER BY (state = 'released'), created_at DESC LIMIT 1;

-- name: CoreBoxLock :one
SELECT * FROM boxes WHERE id = $1 FOR UPDATE;

-- name: CoreBoxes :many
SELECT * FROM boxes ORDER BY (state = 'released'), name;

-- name: CoreBoxSetPresence :exec
UPDATE boxes SET presence = $2 WHERE id = $1;

-- name: CoreBoxSetState :exec
UPDATE boxes SET state = $2, released_at = CASE WHEN $2 = 'released' THEN now() ELSE released_at END WHERE id = $1;

-- name: CoreSnapshotInsert :one
-- Its parent is its box's head now, in the transaction that records it.
INSERT INTO snapshots (id, box_id, box_name, box_kind, box_system, box_thread_id, backend_id, host, storage, storage_type,
    guest_generation, name, note, taken_at, by_kind, by_thread_id, by_why, scope, holds, excludes, owner_kind,
    owner_thread_id, state, picture, undo_of, parent_id)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24, $25,
    (SELECT head_id FROM boxes WHERE boxes.id = $2))
RETURNING *;

-- name: CoreSnapshotByID :one
SELECT * FROM snapshots WHERE id = $1;

-- name: CoreSnapshotLock :one
SELECT * FROM snapshots WHERE id = $1 FOR UPDATE;

-- name: CoreSnapshotsByRef :one
SELECT * FROM snapshots WHERE backend_id = $1 AND ref = $2 LIMIT 1;

-- name: CoreSnapshotsOfBox :many
SELECT * FROM snapshots WHERE box_id = $1 ORDER BY taken_at DESC, id;

-- name: CoreSnapshotsAll :many
SELECT * FROM snapshots ORDER BY taken_at DESC, id;

-- name: CoreSnapshotNames :many
SELECT name FROM snapshots WHERE box_id = $1;

-- name: CoreSnapshotState :execrows
UPDATE snapshots SET state = @new_state, error = @error, state_at = now() WHERE id = @id AND state = @old_state;

-- name: CoreSnapshotDelete :exec
DELETE FROM snapshots WHERE id = $1;

-- name: CoreSnapshotRename :exec
UPDATE snapshots SET name = $2 WHERE id = $1;

-- name: CoreSnapshotNote :exec
UPDATE snapshots SET note = $2 WHERE id = $1;

-- name: CoreSnapshotKeep :exec
UPDATE snapshots SET kept_until = $2,
    kept_at = CASE WHEN $2::timestamptz IS NULL THEN NULL ELSE coalesce(kept_at, now()) END,
    owner_kind = CASE WHEN $2::timestamptz IS NULL THEN CASE WHEN box_thread_id IS NULL THEN 'person' ELSE 'thread' END ELSE 'person' END,
    owner_thread_id = CASE WHEN $2::timestamptz IS NULL THEN box_thread_id ELSE NULL END,
    -- A kept undo is an ordinary kept snapshot from then on, also once
    -- unkept: it is no longer replaced as an undo.
    undo_of = CASE WHEN $2::timestamptz IS NULL THEN undo_of ELSE NULL END
WHERE id = $1;

-- name: CoreSnapshotBoxGone :exec
UPDATE snapshots SET box_gone_at = now(), box_gone_how = @how::text WHERE box_id = @box_id;

-- name: CoreOpSetUndo :exec
UPDATE operations SET undo_id = @undo_id::text, snapshots = array_append(snapshots, @undo_id::text) WHERE id = @id;

-- name: CoreOpUnsettled :many
SELECT * FROM operations WHERE box_id = @box_id::text AND state = 'unknown' ORDER BY seq;

-- name: CorePins :many
SELECT id AS operation, kind, created_at AS at, coalesce(box_id, '') AS box FROM operations
WHERE state IN ('running', 'unknown') AND @snapshot_id::text = ANY (snapshots) AND id <> @except_op ORDER BY seq;

-- name: CoreAllPins :many
SELECT s::text AS snapshot, id AS operation, kind, created_at AS at, coalesce(box_id, '') AS box
FROM operations, unnest(snapshots) AS s WHERE state IN ('running', 'unknown') ORDER BY seq;

-- name: CoreLogInsert :exec
INSERT INTO box_log (box_id, kind, actor_kind, actor_thread, actor_why, words, snapshot_id, operation_id, data)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9);

-- name: CoreLogOfBox :many
SELECT * FROM box_log WHERE box_id = @box_id ORDER BY id DESC LIMIT @max_rows::int;

-- name: CoreSettingGet :one
SELECT value FROM settings WHERE key = $1;

-- name: CoreSettingSet :exec
INSERT INTO settings (key, value) VALUES ($1, $2)
ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, updated_at = now();

-- name: CorePictureGet :one
SELECT jpeg, width, height FROM pictures WHERE snapshot_id = $1;

-- name: CorePictureInsert :exec
INSERT INTO pictures (snapshot_id, jpeg, width, height, taken_at, bytes) VALUES ($1, $2, $3, $4, $5, $6)
ON CONFLICT (snapshot_id) DO UPDATE SET jpeg = EXCLUDED.jpeg, width = EXCLUDED.width, height = EXCLUDED.height,
    taken_at = EXCLUDED.taken_at, bytes = EXCLUDED.bytes;

-- name: CorePictureState :exec
UPDATE snapshots SET picture = $2 WHERE id = $1;

-- name: CorePicturesPrune :exec
-- Keeps all pictures within the cap: the newest first, kept snapshots' before
-- unkept ones', so the oldest unkept go first.
WITH ranked AS (
    SELECT p.snapshot_id, sum(p.bytes) OVER (ORDER BY (s.kept_until IS NOT NULL) DESC, p.taken_at DESC) AS running
    FROM pictures p JOIN snapshots s ON s.id = p.snapshot_id
), gone AS (
    DELETE FROM pictures WHERE snapshot_id IN (SELECT snapshot_id FROM ranked WHERE running > @cap_bytes::bigint) RETURNING snapshot_id
)
UPDATE snapshots SET picture = 'none' WHERE id IN (SELECT snapshot_id FROM gone);

-- name: CoreStorageLock :exec
SELECT pg_advisory_xact_lock(hashtextextended('storage:' || @storage_key::text, 0));

-- name: CoreReservedOn :one
SELECT coalesce(sum((reserved->>'bytes')::bigint), 0)::bigint FROM operations
WHERE state IN ('running', 'unknown') AND reserved->>'storage' = @storage_key::text;

-- name: CoreBoxInsertFork :one
INSERT INTO boxes (id, name, kind, thread_id, backend_id, host, guest_ref, forked_from, has_screen, owner_host)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, sqlc.narg(owner_host))
RETURNING *;

-- name: CoreSnapshotSetPrice :exec
UPDATE snapshots SET price = $2 WHERE id = $1;
