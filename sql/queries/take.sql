-- An agent's take in few statements (at most 10 queries a take). Each query
-- here folds what a hot path read or wrote in several round trips into one
-- statement.

-- name: TakeAgentCall :one
-- What an agent's call needs before its tool runs, in one read: the live
-- thread its token names; the first of the boxes it has a workspace on (in
-- CoreBoxes' order) that is an execution machine whose turns are held, by a
-- request to restore it that still waits at @now or by a restore that runs;
-- and whether the thread has answers it was not told yet, or requests that
-- expired unanswered at @now (Approvals().News then reads and tells them). No
-- row: no live thread.
SELECT t.id,
    coalesce((
        SELECT b.name FROM boxes b
        WHERE b.presence -> 'workspaces' @> jsonb_build_array(jsonb_build_object('thread', t.id))
          AND b.presence -> 'workspaces' @> '[{"runsOn": true}]'::jsonb
          AND (EXISTS (SELECT 1 FROM approvals a WHERE a.state = 'pending' AND a.box_id = b.id AND a.execution AND a.expires_at > @now::timestamptz)
               OR EXISTS (SELECT 1 FROM operations o WHERE o.box_id = b.id AND o.kind = 'restore' AND o.state IN ('running', 'unknown')))
        ORDER BY (b.state = 'released'), b.name
        LIMIT 1), '')::text AS held_box,
    EXISTS (
        SELECT 1 FROM approvals a
        WHERE a.thread_id = t.id AND NOT a.reported
          AND ((a.state <> 'pending' AND a.answer IS NOT NULL) OR (a.state = 'pending' AND a.expires_at <= @now::timestamptz))
    ) AS news
FROM threads t
WHERE t.token_hash = @token_hash AND t.ended_at IS NULL;

-- name: TakeSnapshotTaken :many
-- A take's snapshot recorded as taken, as PerfSnapshotTaken records it (the
-- record made ready, the box log's event, the box's head moved on, the
-- box's row locked first), with its operation moved on to @next_step and
-- the box's snapshots answered, the taken one as it is now, in
-- CoreSnapshotsOfBox's order: the three statements that followed each
-- other in one. No taken one among them: it was no longer taking, and
-- nothing changed.
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
    RETURNING snapshots.*
), logged AS (
    INSERT INTO box_log (box_id, kind, actor_kind, actor_thread, actor_why, words, snapshot_id, operation_id)
    SELECT taken.box_id, @log_kind::text, @actor_kind, sqlc.narg(actor_thread), sqlc.narg(actor_why), @words, taken.id, @operation_id::text
    FROM taken
), chain(id, parent_id, depth) AS (
    SELECT s.id, s.parent_id, 0 FROM snapshots s WHERE s.id = @id
    UNION ALL
    SELECT s.id, s.parent_id, c.depth + 1 FROM snapshots s JOIN chain c ON s.id = c.parent_id WHERE c.depth < 10000
), head AS (
    UPDATE boxes SET head_id = taken.id
    FROM taken
    WHERE boxes.id = taken.box_id AND boxes.head_id IS DISTINCT FROM taken.id
        AND (boxes.head_id IS NULL OR boxes.head_id IN (SELECT chain.parent_id FROM chain WHERE chain.parent_id IS NOT NULL))
), stepped AS (
    UPDATE operations SET step = @next_step::text
    WHERE operations.id = @operation_id::text AND operations.state = 'running' AND EXISTS (SELECT 1 FROM taken)
)
SELECT s.* FROM snapshots s WHERE s.box_id = @box_id AND s.id <> @id
UNION ALL
SELECT taken.* FROM taken
ORDER BY taken_at DESC, id;

-- name: TakeSnapshotToRun :one
-- A take's run reads its snapshot and its box together, and records the step it runs first while its
-- snapshot is taking: the picture, for a first run whose box has a screen
-- and whose picture is not off, else the snapshot. A snapshot no longer
-- taking leaves the step as it was. A run that started with TakeStart has
-- both already; this is for one that started with OpTryStart.
WITH stepped AS (
    UPDATE operations SET step = CASE WHEN NOT @resuming::boolean AND sn.picture <> 'off' AND b.has_screen THEN 'picture' ELSE 'snapshot' END
    FROM snapshots sn JOIN boxes b ON b.id = sn.box_id
    WHERE operations.id = @operation_id::text AND operations.state = 'running' AND sn.id = @id::text AND sn.state = 'taking'
)
SELECT sqlc.embed(snapshots), sqlc.embed(boxes)
FROM snapshots JOIN boxes ON boxes.id = snapshots.box_id
WHERE snapshots.id = @id::text;

-- name: TakeStart :one
-- A take's run starts in one statement (was OpTryStart, then
-- TakeSnapshotToRun): the operation's session lock, taken as OpTryStart
-- takes it, and, only when this session got it, the take locked (its
-- operation's row, then its snapshot's, shared), marked started, the step
-- it runs first recorded while its snapshot is taking (TakeSnapshotToRun's:
-- the picture for a first run whose box has a screen and whose picture is
-- not off, else the snapshot; a run after a restart, or after a task its
-- job snoozed on, is not a first run), and the operation, its snapshot and
-- its box answered. The rows are locked after the session lock, so the
-- operation and its snapshot are read as the last worker that held the
-- lock committed them, also when it committed after this statement began.
-- The operation is answered as the common expression operations, its
-- snapshot and box as snapshots and boxes, named as their tables; the
-- tables are read as public.*. No row: another session holds the lock, the
-- operation is not a running take, or its snapshot or its box is gone;
-- nothing is written then, and a lock this session got is let go.
WITH lock AS MATERIALIZED (
    SELECT pg_try_advisory_lock(hashtextextended(sqlc.arg(id)::text, 0)) AS got
), op AS MATERIALIZED (
    SELECT o.id, o.target, o.resumes, o.task_waiting FROM public.operations o
    WHERE o.id = sqlc.arg(id)::text AND o.kind = 'take' AND o.state = 'running' AND (SELECT lock.got FROM lock)
    FOR UPDATE
), snapshots AS MATERIALIZED (
    SELECT s.* FROM public.snapshots s WHERE s.id = (SELECT op.target FROM op) FOR SHARE
), boxes AS MATERIALIZED (
    SELECT b.* FROM public.boxes b WHERE b.id = (SELECT snapshots.box_id FROM snapshots)
), operations AS (
    UPDATE public.operations o SET started_at = coalesce(o.started_at, now()),
        step = CASE WHEN snapshots.state <> 'taking' THEN o.step
            WHEN NOT (op.resumes > 0 OR op.task_waiting) AND snapshots.picture <> 'off' AND boxes.has_screen THEN 'picture'
            ELSE 'snapshot' END
    FROM op, snapshots, boxes
    WHERE o.id = op.id
    RETURNING o.*
), freed AS MATERIALIZED (
    SELECT pg_advisory_unlock(hashtextextended(sqlc.arg(id)::text, 0)) AS let_go FROM lock
    WHERE lock.got AND NOT EXISTS (SELECT 1 FROM operations)
)
SELECT sqlc.embed(operations), sqlc.embed(snapshots), sqlc.embed(boxes)
FROM operations, snapshots, boxes
WHERE (SELECT count(*) FROM freed) >= 0;

-- name: TakeAdmitLock :one
-- A take's admission locks, in one statement and in the order every
-- admission takes them: its box's row (answered as it is now), the
-- backend's ceiling lock when its snapshots are paid (PersonCeilingLock's),
-- and the storage's lock (CoreStorageLock's, on the key of the box's
-- backend, host and @storage), both held to the commit. Each lock's query
-- reads what the one before it answered, so they are taken in this order.
-- The box locked is answered as the common expression boxes, named as its
-- table. No row: no such box.
WITH boxes AS MATERIALIZED (
    SELECT * FROM public.boxes b WHERE b.id = @id FOR UPDATE
), ceiling AS MATERIALIZED (
    SELECT pg_advisory_xact_lock(hashtext('boxsnap-ceiling:' || boxes.backend_id)) FROM boxes WHERE @paid::boolean
), storage AS MATERIALIZED (
    SELECT pg_advisory_xact_lock(hashtextextended('storage:' || boxes.backend_id || '/' || boxes.host || '/' || @storage::text, 0))
    FROM boxes, (SELECT count(*) AS n FROM ceiling) c
)
SELECT sqlc.embed(boxes) FROM boxes, (SELECT count(*) AS n FROM storage) s;

-- name: TakeAdmit :one
-- A take's snapshot record (CoreSnapshotInsert's, with its price) and its
-- operation (OpInsert's: queued when no other operation of the box runs,
-- and the box's running ones marked followed otherwise), in one statement
-- under the locks TakeAdmitLock took; with them, what the operations
-- running or unconfirmed before this one reserve on @storage_key
-- (CoreReservedOn's), and the first of the box's operations that could not
-- be confirmed, or "" (CoreOpUnsettled's): the admission refuses on either
-- and rolls back what this wrote. The two rows written are answered as
-- the common expressions snapshots and operations, named as the tables
-- they were written to; the tables themselves are read as public.*.
WITH snapshots AS (
    INSERT INTO public.snapshots (id, box_id, box_name, box_kind, box_system, box_thread_id, backend_id, host, storage, storage_type,
        guest_generation, name, note, taken_at, by_kind, by_thread_id, by_why, scope, holds, excludes, owner_kind,
        owner_thread_id, state, picture, price, parent_id)
    VALUES (@snapshot_id, @box_id::text, @box_name, @box_kind, @box_system, sqlc.narg(box_thread_id), @backend_id, @host, @storage, @storage_type,
        @guest_generation, @name, @note, @taken_at, @snap_by_kind, sqlc.narg(snap_by_thread_id), sqlc.narg(by_why), @scope, @holds,
        sqlc.narg(excludes), @owner_kind, sqlc.narg(owner_thread_id), @state, @picture, sqlc.narg(price)::jsonb,
        (SELECT b.head_id FROM public.boxes b WHERE b.id = @box_id::text))
    RETURNING *
), marked AS (
    UPDATE public.operations o SET followed = true
    WHERE o.box_id = @box_id::text AND o.state = 'running' AND NOT o.followed
), operations AS (
    INSERT INTO public.operations (id, request_key, kind, box_id, generation, target, snapshots, by_kind, by_thread_id, consent, params, reserved, step)
    VALUES (@op_id, sqlc.narg(request_key), @kind, @box_id::text, @generation, @snapshot_id, ARRAY[@snapshot_id::text],
        @op_by_kind, sqlc.narg(op_by_thread_id), sqlc.narg(consent), @params, sqlc.narg(reserved)::jsonb,
        CASE WHEN EXISTS (SELECT 1 FROM public.operations o WHERE o.box_id = @box_id::text AND o.state = 'running') THEN 'waiting' ELSE 'queued' END)
    RETURNING *
)
SELECT sqlc.embed(snapshots), sqlc.embed(operations),
    (SELECT coalesce(sum((o.reserved->>'bytes')::bigint), 0) FROM public.operations o
     WHERE o.state IN ('running', 'unknown') AND o.reserved->>'storage' = sqlc.arg(storage_key)::text)::bigint AS reserved_before,
    coalesce((SELECT o.id FROM public.operations o WHERE o.box_id = @box_id::text AND o.state = 'unknown' ORDER BY o.seq LIMIT 1), '')::text AS unsettled
FROM snapshots, operations;
