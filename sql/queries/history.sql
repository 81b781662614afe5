-- Automatic history: automatic snapshots, their check, thinning, Save and
-- Unsave, and each box's history settings.

-- name: HistoryMarkAutomatic :exec
-- A snapshot the automatic check took is automatic from its record's start.
UPDATE snapshots SET automatic = true WHERE id = $1;

-- name: HistorySetAutomatic :exec
-- Save makes an automatic snapshot an ordinary one (with a name, if given);
-- Unsave makes an ordinary one automatic again.
UPDATE snapshots SET automatic = $2, name = coalesce(sqlc.narg('new_name')::text, name) WHERE id = $1;

-- name: HistoryBoxes :many
-- The boxes the automatic check looks at, with their history settings,
-- when the check last asked each whether it changed, and when its newest
-- automatic snapshot was taken (1970 for none).
SELECT b.id, b.backend_id, b.kind, b.host, b.guest_ref, b.generation,
       h.automatic, coalesce(h.running, false) AS running, h.checked_at,
       coalesce(la.taken_at, 'epoch'::timestamptz)::timestamptz AS last_automatic
FROM boxes b LEFT JOIN box_history h ON h.box_id = b.id
LEFT JOIN LATERAL (SELECT s.taken_at FROM snapshots s WHERE s.box_id = b.id AND s.automatic
                   ORDER BY s.taken_at DESC LIMIT 1) la ON true
WHERE b.state = 'ready';

-- name: HistoryBusyBoxes :many
-- Boxes with an operation running or waiting: the check leaves them be.
SELECT DISTINCT box_id FROM operations WHERE state IN ('running', 'unknown') AND box_id IS NOT NULL;

-- name: HistoryLastTake :one
-- When a box's last snapshot that is not failed was taken.
SELECT taken_at FROM snapshots WHERE box_id = $1 AND state <> 'failed' ORDER BY taken_at DESC LIMIT 1;

-- name: HistorySetRunning :exec
-- What the check saw: whether the box runs.
INSERT INTO box_history (box_id, running, checked_at) VALUES ($1, $2, $3)
ON CONFLICT (box_id) DO UPDATE SET running = excluded.running, checked_at = excluded.checked_at;

-- name: HistorySettingsOf :one
-- A box's own history settings (null: the backend's, the default's).
SELECT automatic, max_bytes FROM box_history WHERE box_id = $1;

-- name: HistorySetSettings :exec
-- The person sets a box's history settings.
INSERT INTO box_history (box_id, automatic, max_bytes) VALUES ($1, $2, $3)
ON CONFLICT (box_id) DO UPDATE SET automatic = excluded.automatic, max_bytes = excluded.max_bytes;

-- name: HistoryBoxesToThin :many
-- The boxes with automatic snapshots, for thinning.
SELECT DISTINCT box_id FROM snapshots WHERE automatic;

-- name: HistoryHeldBytes :one
-- What a box's snapshots hold, for the size rule.
SELECT coalesce(sum(size_bytes), 0)::bigint FROM snapshots WHERE box_id = $1 AND state NOT IN ('failed', 'deleting');
