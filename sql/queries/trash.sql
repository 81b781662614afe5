-- The trash and reset.

-- name: TrashInsert :exec
-- A release moves the box to the trash: the row is written as the release
-- starts its trash steps, so a resumed one finds it.
INSERT INTO box_trash (box_id, release_op, trashed_at, until, by_kind, by_thread_id)
VALUES ($1, $2, $3, $4, $5, $6)
ON CONFLICT (box_id) DO NOTHING;

-- name: TrashByBox :one
SELECT box_id, release_op, trashed_at, until, final_snapshot, final_words, was_running, guest_state, by_kind, by_thread_id
FROM box_trash WHERE box_id = $1;

-- name: TrashSetFinal :exec
-- The final snapshot taken at the release, or why there is none.
UPDATE box_trash SET final_snapshot = $2, final_words = $3 WHERE box_id = $1;

-- name: TrashSetRunning :exec
-- Whether the guest ran before the release stopped it.
UPDATE box_trash SET was_running = $2 WHERE box_id = $1;

-- name: TrashSetAside :exec
-- What the guest's backend set aside to give back at a restore.
UPDATE box_trash SET guest_state = $2 WHERE box_id = $1;

-- name: TrashForget :exec
-- The box left the trash: restored, or emptied.
DELETE FROM box_trash WHERE box_id = $1;

-- name: TrashList :many
-- Every box in the trash, the soonest to go first.
SELECT t.box_id, t.release_op, t.trashed_at, t.until, t.final_snapshot, t.final_words, t.was_running, t.guest_state,
    t.by_kind, t.by_thread_id
FROM box_trash t JOIN boxes b ON b.id = t.box_id
WHERE b.state = 'trashed'
ORDER BY t.until, b.name;

-- name: TrashDue :many
-- The boxes whose window in the trash has ended.
SELECT t.box_id FROM box_trash t JOIN boxes b ON b.id = t.box_id
WHERE b.state = 'trashed' AND t.until <= $1
ORDER BY t.until;

-- name: MadeFromInsert :exec
-- What a box was made from, for its reset.
INSERT INTO box_made_from (box_id, template, source, command) VALUES ($1, $2, $3, $4)
ON CONFLICT (box_id) DO UPDATE SET template = EXCLUDED.template, source = EXCLUDED.source, command = EXCLUDED.command;

-- name: MadeFromByBox :one
SELECT box_id, template, source, command FROM box_made_from WHERE box_id = $1;

-- name: ResetNewestUndo :one
-- The box's newest undo that is ready: what "Undo" restores.
SELECT id FROM snapshots
WHERE box_id = $1 AND undo_of IS NOT NULL AND state = 'ready' AND guest = 'current' AND kept_until IS NULL
ORDER BY taken_at DESC, id DESC LIMIT 1;

-- name: ResetHeadClear :exec
-- A reset makes the box fresh: it descends from none of its snapshots.
UPDATE boxes SET head_id = NULL WHERE id = $1;

-- name: TrashCount :one
-- How many boxes are in the trash (the Boxes page's Trash tab).
SELECT count(*) FROM boxes WHERE state = 'trashed';
