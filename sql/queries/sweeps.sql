-- The core's sweeps (package app/snapshots/sweeps): the
-- reconcile of records against the backends, housekeeping, the expiry of
-- keeps, the room sweep and the outside-restore scan. Times are passed in
-- from the core's clock, so tests move them with a fake clock.

-- name: SweepSnapshotsOfBackend :many
SELECT * FROM snapshots WHERE backend_id = $1 ORDER BY taken_at, id;

-- name: SweepSnapshotsNotIn :many
SELECT * FROM snapshots WHERE NOT (backend_id = ANY (@backends::text[])) AND state IN ('ready', 'unavailable') ORDER BY taken_at, id;

-- name: SweepMissing :exec
UPDATE snapshots SET missing_since = @since::timestamptz WHERE id = @id AND missing_since IS NULL;

-- name: SweepSeen :exec
UPDATE snapshots SET missing_since = NULL WHERE id = $1 AND missing_since IS NOT NULL;

-- name: SweepSnapshotInsert :one
INSERT INTO snapshots (id, box_id, box_name, box_kind, box_system, box_thread_id, box_gone_at, box_gone_how,
    backend_id, host, storage, storage_type, guest, name, taken_at, captured_at, by_kind, scope, holds,
    owner_kind, owner_thread_id, kept_until, kept_at, fork_safe, depends_on, ref, state, error, found)
VALUES (@id, @box_id, @box_name, @box_kind, @box_system, @box_thread_id, @box_gone_at, @box_gone_how,
    @backend_id, @host, @storage, @storage_type, @guest, @name, @taken_at, @taken_at, 'unknown', 'box', @holds,
    @owner_kind, @owner_thread_id, sqlc.narg(kept_until)::timestamptz,
    CASE WHEN sqlc.narg(kept_until)::timestamptz IS NULL THEN NULL ELSE @now::timestamptz END,
    @fork_safe, @depends_on, @ref, @state, @error, @found)
ON CONFLICT (id) DO NOTHING
RETURNING *;

-- name: SweepGoneBoxInsert :exec
INSERT INTO boxes (id, name, kind, backend_id, host, guest_ref, state, released_at, owner_host)
VALUES ($1, $2, $3, $4, $5, $6, 'released', $7, sqlc.narg(owner_host))
ON CONFLICT (id) DO NOTHING;

-- name: SweepWasDeleted :one
SELECT (EXISTS (SELECT 1 FROM box_log WHERE snapshot_id = @snapshot_id::text AND kind = 'snapshot-deleted')
    OR EXISTS (SELECT 1 FROM operations WHERE target = @snapshot_id::text AND kind IN ('delete', 'expiry')))::boolean;

-- name: SweepFailedOld :many
DELETE FROM snapshots s WHERE s.state = 'failed' AND s.state_at < $1
    AND NOT EXISTS (SELECT 1 FROM operations o WHERE o.state IN ('running', 'unknown') AND s.id = ANY (o.snapshots))
RETURNING id;

-- name: SweepLostOld :many
DELETE FROM snapshots s WHERE s.state = 'lost' AND s.state_at < $1
    AND NOT EXISTS (SELECT 1 FROM operations o WHERE o.state IN ('running', 'unknown') AND s.id = ANY (o.snapshots))
RETURNING id;

-- name: SweepLogPrune :execrows
DELETE FROM box_log WHERE id IN (
    SELECT id FROM (SELECT id, row_number() OVER (PARTITION BY box_id ORDER BY id DESC) AS n FROM box_log) x WHERE x.n > @keep::int);

-- name: SweepExpired :many
SELECT * FROM snapshots WHERE kept_until IS NOT NULL AND kept_until < @now::timestamptz AND state = 'ready' ORDER BY kept_until, id;

-- name: SweepRoomCandidates :many
SELECT * FROM snapshots WHERE backend_id = $1 AND host = $2 AND storage = $3 AND state = 'ready'
    AND kept_until IS NULL AND by_kind = 'agent' ORDER BY taken_at, id;

-- name: SweepStorages :many
SELECT DISTINCT s.backend_id, s.host, s.storage, b.id AS box_id FROM snapshots s JOIN boxes b ON b.id = s.box_id
WHERE s.state = 'ready' AND s.storage <> '' AND b.state = 'ready' AND s.guest = 'current' AND b.backend_id = s.backend_id
ORDER BY s.backend_id, s.host, s.storage, b.id;

-- name: SweepBoxesOfBackend :many
SELECT * FROM boxes WHERE backend_id = $1 AND state <> 'released';

-- name: SweepTaskLogged :one
SELECT coalesce(array_agg(kind), '{}')::text[] FROM box_log WHERE box_id = @box_id AND data->>'task' = @task::text;

-- name: SweepOpTasks :many
SELECT id, kind, coalesce(box_id, '') AS box, coalesce(task->>'id', '')::text AS upid, coalesce(started_at, created_at) AS started_at, ended_at
FROM operations WHERE box_id = ANY (@boxes::text[]) AND coalesce(started_at, created_at) > @since::timestamptz;

-- name: SweepSetRef :exec
UPDATE snapshots SET ref = $2 WHERE id = $1 AND ref = '';
