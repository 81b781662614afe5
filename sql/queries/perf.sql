-- Queries that fold a hot path's several round trips into one (a take's
-- queries).

-- name: PerfSnapshotTaken :one
-- A taken snapshot recorded in one statement, so as one change: its record
-- made ready with what the backend answered (depending on the snapshot of
-- the parent reference the backend named, when boxsnap holds it), the box
-- log's event of the take when log_kind is set, and the box's head moved on
-- to it by itself: when the box has no head yet, or when its head is an
-- ancestor of the snapshot (a known descendant); never sideways or back.
-- It answers how many records moved: 0 when the snapshot was no longer
-- taking, and then nothing else changed. The box's row is locked first,
-- before the snapshot's, in the order every admission and delete takes
-- them (changeNow), so the two cannot wait for each other.
WITH RECURSIVE box AS (
    SELECT boxes.id FROM boxes WHERE boxes.id = @box_id FOR UPDATE
), parent AS (
    SELECT p.id FROM snapshots p
    WHERE sqlc.narg(parent_ref)::text IS NOT NULL AND p.backend_id = @backend_id AND p.ref = sqlc.narg(parent_ref)::text
    LIMIT 1
), taken AS (
    UPDATE snapshots SET state = 'ready', state_at = now(), error = NULL, ref = @ref, storage = coalesce(sqlc.narg(storage)::text, snapshots.storage),
        captured_at = @captured_at, took_ms = @took_ms, paused_ms = @paused_ms, holds = @holds, size_bytes = @size_bytes,
        size_meaning = @size_meaning, fork_safe = @fork_safe,
        depends_on = coalesce((SELECT array_agg(parent.id) FROM parent), '{}'::text[]),
        excludes = coalesce(sqlc.narg(excludes)::text, snapshots.excludes)
    WHERE snapshots.id = @id AND snapshots.state = 'taking' AND EXISTS (SELECT 1 FROM box)
    RETURNING snapshots.id, snapshots.box_id
), logged AS (
    INSERT INTO box_log (box_id, kind, actor_kind, actor_thread, actor_why, words, snapshot_id, operation_id)
    SELECT taken.box_id, sqlc.narg(log_kind)::text, @actor_kind, sqlc.narg(actor_thread), sqlc.narg(actor_why), @words, taken.id, sqlc.narg(operation_id)
    FROM taken WHERE sqlc.narg(log_kind)::text IS NOT NULL
), chain(id, parent_id, depth) AS (
    SELECT s.id, s.parent_id, 0 FROM snapshots s WHERE s.id = @id
    UNION ALL
    SELECT s.id, s.parent_id, c.depth + 1 FROM snapshots s JOIN chain c ON s.id = c.parent_id WHERE c.depth < 10000
), head AS (
    UPDATE boxes SET head_id = taken.id
    FROM taken
    WHERE boxes.id = taken.box_id AND boxes.head_id IS DISTINCT FROM taken.id
        AND (boxes.head_id IS NULL OR boxes.head_id IN (SELECT chain.parent_id FROM chain WHERE chain.parent_id IS NOT NULL))
)
SELECT count(*) FROM taken;

-- name: PerfBoxesOfThread :many
-- The boxes a thread has a workspace on, in CoreBoxes' order.
SELECT * FROM boxes
WHERE presence -> 'workspaces' @> jsonb_build_array(jsonb_build_object('thread', @thread::text))
ORDER BY (state = 'released'), name;
