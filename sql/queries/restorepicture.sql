-- A restore's undo picture, from its capture before the stop to its undo
-- (migrations/00190_restore_picture.sql).

-- name: RestorePictureHold :exec
-- The picture captured as the restore starts, or why there is none
-- (failed); a restore resumed at its start keeps the first.
INSERT INTO restore_pictures (operation_id, jpeg, width, height, failed, taken_at)
VALUES (sqlc.arg(operation_id), sqlc.narg(jpeg), sqlc.arg(width), sqlc.arg(height), sqlc.narg(failed), sqlc.arg(taken_at))
ON CONFLICT (operation_id) DO NOTHING;

-- name: RestorePictureHeld :one
SELECT jpeg, width, height, failed FROM restore_pictures WHERE operation_id = $1;

-- name: RestorePictureDrop :exec
DELETE FROM restore_pictures WHERE operation_id = $1;

-- name: SweepRestorePictures :execrows
-- Pictures of restores that ended before their undo was taken (a stop that
-- failed, a restore without an undo after all).
DELETE FROM restore_pictures r USING operations o
WHERE o.id = r.operation_id AND o.ended_at IS NOT NULL;
