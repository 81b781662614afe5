-- Held copies, swaps and earlier guests.

-- name: HeldSetCopy :exec
-- The snapshot now lives in its held copy: a template guest of its own,
-- which holds the disk only.
UPDATE snapshots SET guest = 'held-copy', guest_ref = @guest_ref::text, host = @host, holds = 'disk', state_at = now()
WHERE id = @id;

-- name: HeldSetWhere :exec
-- The reconcile found a snapshot where its record did not say.
UPDATE snapshots SET guest = @guest, guest_ref = @guest_ref::text WHERE id = @id;

-- name: HeldToEarlier :exec
-- A swap: the box's snapshots on its current guest stay on that guest,
-- which becomes the box's earlier guest.
UPDATE snapshots SET guest = 'earlier', guest_ref = @guest_ref::text
WHERE box_id = @box_id AND guest = 'current';

-- name: HeldBoxSwap :exec
-- A swap gives the box a new guest, its next generation.
UPDATE boxes SET guest_ref = $2, host = $3, generation = generation + 1 WHERE id = $1 AND guest_ref <> $2
RETURNING generation;

-- name: HeldEarlierInUse :one
-- How many snapshots still live on one earlier guest of a box.
SELECT count(*) FROM snapshots WHERE box_id = @box_id AND guest = 'earlier' AND guest_ref = @guest_ref::text AND state <> 'deleting';

-- name: HeldOpSetGuests :exec
-- A swap records its guests on its operation before it changes one.
UPDATE operations SET guests = $2 WHERE id = $1;

-- name: HeldOpRunningOnBox :one
-- The operation running on a box now, if any (not one waiting its turn).
SELECT * FROM operations WHERE box_id = @box_id::text AND state = 'running' AND step NOT IN ('waiting', 'queued')
ORDER BY seq LIMIT 1;

-- name: HeldLastRelease :one
-- A box's last release, for the words of one that stopped.
SELECT * FROM operations WHERE box_id = @box_id::text AND kind = 'release' ORDER BY seq DESC LIMIT 1;
