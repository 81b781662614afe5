-- The operation engine (app/operations): admission, the queue, steps,
-- tasks, ends, recovery and the end's notification. Nothing here knows what
-- a kind of operation does.

-- name: OpInsert :one
-- Queued when no other operation of its box runs (its job goes in with it),
-- else waiting for the end of the one before; the box's running ones are
-- then marked followed, so their ends look for it (OpEndAlone). The
-- caller holds the box's row locked.
WITH marked AS (
    UPDATE operations o SET followed = true
    WHERE o.box_id = sqlc.narg(box_id)::text AND o.state = 'running' AND NOT o.followed
)
INSERT INTO operations (id, request_key, kind, box_id, generation, target, snapshots, by_kind, by_thread_id, consent, params, reserved, step)
VALUES (@id, sqlc.narg(request_key), @kind, sqlc.narg(box_id)::text, @generation, sqlc.narg(target), @snapshots, @by_kind, sqlc.narg(by_thread_id),
    sqlc.narg(consent), @params, sqlc.narg(reserved),
    CASE WHEN EXISTS (SELECT 1 FROM operations o WHERE o.box_id = sqlc.narg(box_id)::text AND o.state = 'running') THEN 'waiting' ELSE 'queued' END)
RETURNING *;

-- name: OpByID :one
SELECT * FROM operations WHERE id = $1;

-- name: OpByRequest :one
SELECT * FROM operations WHERE request_key = $1;

-- name: OpLock :one
SELECT * FROM operations WHERE id = $1 FOR UPDATE;

-- name: OpStep :exec
UPDATE operations SET step = $2 WHERE id = $1 AND state = 'running';

-- name: OpStepBoxRan :exec
-- A restore's stop step, recorded with whether the box ran just before it
-- (box_ran), in one statement.
UPDATE operations SET step = $2, box_ran = $3 WHERE id = $1 AND state = 'running';

-- name: OpTryStart :one
-- A run's start in one statement (was OpTryLock, then OpStart): the
-- operation's session lock (OpTryLock's, held by the connection until Run
-- lets it go) and, only when this session got it, the operation marked
-- started and answered. The lock is taken before the row is read for the
-- update, and the update reads the row as the last worker that held the
-- lock left it, even when that one committed after this statement began
-- (READ COMMITTED rechecks an updated row's state before it updates it).
-- No row: another session holds the lock, or the operation no longer runs;
-- either way this session holds nothing (a lock it got for an operation
-- that no longer runs is let go in the statement).
WITH lock AS MATERIALIZED (
    SELECT pg_try_advisory_lock(hashtextextended(sqlc.arg(id)::text, 0)) AS got
), started AS (
    UPDATE operations SET started_at = coalesce(operations.started_at, now())
    WHERE operations.id = sqlc.arg(id)::text AND operations.state = 'running' AND (SELECT lock.got FROM lock)
    RETURNING operations.*
), freed AS MATERIALIZED (
    SELECT pg_advisory_unlock(hashtextextended(sqlc.arg(id)::text, 0)) AS let_go FROM lock
    WHERE lock.got AND NOT EXISTS (SELECT 1 FROM started)
)
SELECT started.* FROM started WHERE (SELECT count(*) FROM freed) >= 0;

-- name: OpEnd :one
-- The end, and its notification to the waits, sent at commit; it answers
-- the operation as it ended, which the process's own waits are handed. The
-- operation's box's row is locked first (admissions and ends of a box's
-- operations are serialised on it): the box's next waiting
-- operation is read after it, in the next statement, which sees what an
-- admission it waited for committed.
WITH box AS MATERIALIZED (
    SELECT boxes.id FROM boxes
    WHERE boxes.id = (SELECT o.box_id FROM operations o WHERE o.id = sqlc.arg(id))
    FOR UPDATE
), ended AS (
    UPDATE operations SET state = sqlc.arg(state)::text, result = coalesce(sqlc.narg(result)::jsonb, operations.result),
        error = sqlc.narg(error)::text, observed = sqlc.narg(observed)::text, task_waiting = false,
        ended_at = CASE WHEN sqlc.arg(state)::text IN ('done', 'failed') THEN now() ELSE operations.ended_at END
    WHERE id = sqlc.arg(id) AND (SELECT count(*) FROM box) >= 0
    RETURNING *), notified AS (
    SELECT pg_notify(sqlc.arg(channel)::text, ended.id), pg_notify('boxsnap_box_changed', coalesce(ended.box_id, '')) FROM ended)
SELECT ended.* FROM ended CROSS JOIN notified;

-- name: OpEndAlone :one
-- OpEnd in one statement with no transaction, for an operation no other
-- waits behind: no row when it is followed (an admission recorded one
-- waiting behind it; OpInsert marked it, and this update reads the mark as
-- that admission committed it, having waited for the box's lock), or when
-- there is no such operation. The caller then ends it with OpEnd and
-- OpNextWaiting, in one transaction that queues the next. With @let_go,
-- run on the connection that holds the operation's session lock (its
-- run's), the end lets the lock go in the same statement, once the
-- operation's row is updated (the unlock reads the ended row): a worker
-- that takes the lock then waits for this statement's commit to start the
-- row, and finds it ended. No row: the lock is still held.
WITH box AS MATERIALIZED (
    SELECT boxes.id FROM boxes
    WHERE boxes.id = (SELECT o.box_id FROM operations o WHERE o.id = sqlc.arg(id))
    FOR UPDATE
), ended AS (
    UPDATE operations SET state = sqlc.arg(state)::text, result = coalesce(sqlc.narg(result)::jsonb, operations.result),
        error = sqlc.narg(error)::text, observed = sqlc.narg(observed)::text, task_waiting = false,
        ended_at = CASE WHEN sqlc.arg(state)::text IN ('done', 'failed') THEN now() ELSE operations.ended_at END
    WHERE id = sqlc.arg(id) AND NOT operations.followed AND (SELECT count(*) FROM box) >= 0
    RETURNING *), notified AS (
    SELECT pg_notify(sqlc.arg(channel)::text, ended.id), pg_notify('boxsnap_box_changed', coalesce(ended.box_id, '')) FROM ended
), freed AS MATERIALIZED (
    SELECT pg_advisory_unlock(hashtextextended(ended.id, 0)) AS let_go FROM ended WHERE sqlc.arg(let_go)::boolean)
SELECT ended.* FROM ended CROSS JOIN notified WHERE (SELECT count(*) FROM freed) >= 0;

-- name: OpSetTask :exec
UPDATE operations SET task = $2, task_waiting = $3 WHERE id = $1;

-- name: OpTaskWaited :exec
UPDATE operations SET task_waiting = false WHERE id = $1;

-- name: OpNextWaiting :one
SELECT * FROM operations WHERE box_id = $1 AND state = 'running' AND step = 'waiting' ORDER BY seq LIMIT 1 FOR UPDATE;

-- name: OpActiveOnBox :one
SELECT count(*) FROM operations WHERE box_id = $1 AND id <> $2 AND state = 'running';

-- name: OpQueue :exec
UPDATE operations SET step = 'queued' WHERE id = $1;

-- name: OpResumable :many
-- Operations a worker started, and operations whose job a worker fetched
-- and never started: River keeps such a job running until its rescuer (for
-- an operation's job, past its 6-hour timeout). The fetch is known to be
-- nobody's when the worker River recorded in attempted_by holds no presence
-- lock (boxsnap_worker_alive): its process died, however recently it
-- fetched the job; a live worker's fetch is left to it. Recover resumes
-- those no live worker holds, but not one whose job snoozed on its provider
-- task: that job wakes by itself, in whichever process. With only, just
-- that operation (Check now).
SELECT o.* FROM operations o
WHERE o.state = 'running'
  AND (sqlc.narg(only_id)::text IS NULL OR o.id = sqlc.narg(only_id)::text)
  AND (o.started_at IS NOT NULL
       OR (o.step = 'queued' AND EXISTS (
           SELECT 1 FROM river_job j
           WHERE j.kind = 'operation' AND j.args->>'op' = o.id AND j.state = 'running'
             AND NOT boxsnap_worker_alive(j.attempted_by[array_upper(j.attempted_by, 1)]))))
  AND NOT (o.task_waiting AND EXISTS (
           SELECT 1 FROM river_job j
           WHERE j.kind = 'operation' AND j.args->>'op' = o.id AND (j.args->>'resume')::int = o.resumes
             AND j.state IN ('available', 'scheduled', 'retryable')))
ORDER BY o.seq;

-- name: JobsFreeDead :many
-- The River jobs other than operations' (the periodic sweeps) that a worker
-- which died left running: made available again, so a live worker runs
-- them now and the sweep's unique key (which includes running) keeps no
-- later run out until River's rescuer.
UPDATE river_job SET state = 'available', scheduled_at = now()
WHERE state = 'running' AND kind <> 'operation'
  AND NOT boxsnap_worker_alive(attempted_by[array_upper(attempted_by, 1)])
RETURNING id;

-- name: WorkerHold :one
-- A working process's presence lock, held by its own connection for its
-- life (boxsnap_worker_alive).
SELECT pg_try_advisory_lock(hashtextextended('boxsnap worker ' || sqlc.arg(worker)::text, 0));

-- name: OpResumeMark :exec
UPDATE operations SET resumes = $2, state = 'running', ended_at = NULL WHERE id = $1;

-- name: OpTryLock :one
SELECT pg_try_advisory_lock(hashtextextended(sqlc.arg(id)::text, 0));

-- name: OpUnlock :one
SELECT pg_advisory_unlock(hashtextextended(sqlc.arg(id)::text, 0));

-- name: OpFinishStaleJobs :many
-- The River jobs that a killed worker left running (River's own rescuer
-- waits past the job's 6-hour timeout): the job of an operation that ended
-- before ended_before or whose worker is dead, or an attempt a resume
-- replaced. Each is finished as its operation went, so the
-- job dashboard agrees with the operations.
UPDATE river_job j
SET state = (CASE WHEN o.state = 'done' AND (j.args->>'resume')::int = o.resumes THEN 'completed' ELSE 'discarded' END)::river_job_state,
    finalized_at = now()
FROM operations o
WHERE j.kind = 'operation' AND j.state = 'running'
  AND o.id = j.args->>'op'
  AND ((o.state <> 'running' AND (o.ended_at < sqlc.arg(ended_before)::timestamptz
                                  OR NOT boxsnap_worker_alive(j.attempted_by[array_upper(j.attempted_by, 1)])))
       OR (j.args->>'resume')::int < o.resumes)
RETURNING j.id;

-- name: WorkerAlive :one
-- Whether the working process named worker lives: a live session holds its
-- presence lock (boxsnap_worker_alive). A local box's recorded owner is
-- taken over once this answers false.
SELECT boxsnap_worker_alive(sqlc.arg(worker)::text)::boolean AS alive;
