-- How each box runs, as it was made (app/snapshots/boxes records it, and
-- app/snapshots/hosts makes a moved box with it).

-- name: BoxRunSet :exec
INSERT INTO box_runs (box_id, run) VALUES ($1, $2)
ON CONFLICT (box_id) DO UPDATE SET run = EXCLUDED.run;

-- name: BoxRunByBox :one
SELECT run FROM box_runs WHERE box_id = $1;
