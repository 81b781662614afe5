-- Hosts (app/snapshots/hosts, app/boot): the host each process runs on,
-- kept fresh while it lives; the owner of a box whose data is on one host's
-- disk; a move and a takeover change that owner.

-- name: HostSeen :exec
-- A process on this host is alive now; a host marked gone that is seen
-- again is no longer gone.
INSERT INTO hosts (name, first_seen_at, last_seen_at) VALUES (@name, @at, @at)
ON CONFLICT (name) DO UPDATE SET last_seen_at = greatest(hosts.last_seen_at, @at), gone_at = NULL, gone_by = NULL;

-- name: HostWorkerSeen :exec
-- A process with River's workers on this host is alive now: the host is
-- seen, and its workers too.
INSERT INTO hosts (name, first_seen_at, last_seen_at, worked_at) VALUES (@name, @at, @at, @at)
ON CONFLICT (name) DO UPDATE SET last_seen_at = greatest(hosts.last_seen_at, @at),
    worked_at = greatest(hosts.worked_at, @at), gone_at = NULL, gone_by = NULL;

-- name: HostQueueWaiting :one
-- The jobs waiting in one host's queue for a worker of that host.
SELECT count(*) FROM river_job
WHERE queue = @queue::text AND state IN ('available', 'scheduled', 'retryable', 'pending');

-- name: HostByName :one
SELECT * FROM hosts WHERE name = $1;

-- name: Hosts :many
SELECT * FROM hosts ORDER BY name;

-- name: HostMarkGone :one
UPDATE hosts SET gone_at = @at, gone_by = @by WHERE name = @name AND gone_at IS NULL
RETURNING *;

-- name: HostBoxCount :one
SELECT count(*) FROM boxes WHERE owner_host = $1 AND state <> 'released';

-- name: HostBoxesOwned :many
SELECT * FROM boxes WHERE owner_host = $1 AND state <> 'released' ORDER BY name;

-- name: HostBoxOwner :one
-- The host whose queue runs the box's operations; NULL: any host's.
SELECT owner_host FROM boxes WHERE id = $1;

-- name: HostBoxOwners :many
-- The owner of each box of one backend (NULL: none yet), for the sweeps of
-- a one-host backend, which judge only this host's boxes.
SELECT id, owner_host FROM boxes WHERE backend_id = $1;

-- name: HostBoxClaim :execrows
-- A box of a one-host backend made before such boxes had an owner becomes
-- the host's that lists its guest first.
UPDATE boxes SET owner_host = @host::text WHERE id = @id AND owner_host IS NULL;

-- name: HostOthersKnown :one
-- The hosts other than this one that ran boxsnap here and are not marked
-- gone: with none, this host alone judges boxes no host owns yet.
SELECT count(*) FROM hosts WHERE name <> @name::text AND gone_at IS NULL;

-- name: HostBoxSetOwner :exec
UPDATE boxes SET owner_host = $2, host = CASE WHEN owner_host IS NOT NULL THEN $2 ELSE host END WHERE id = $1;

-- name: HostJobsRequeue :execrows
-- The jobs waiting in one host's queue go to another's (a takeover).
UPDATE river_job SET queue = @to_queue::text
WHERE queue = @from_queue::text AND state IN ('available', 'scheduled', 'retryable', 'pending')
  AND args->>'box' = ANY(@boxes::text[]);

-- name: HostBoxOpsUnended :many
-- A box's operations not ended (running, waiting, queued, or unknown),
-- newest first: a takeover ends those its gone host left.
SELECT * FROM operations WHERE box_id = $1 AND state IN ('running', 'unknown') ORDER BY seq DESC;

-- name: HostReleasedBoxByGuest :many
-- The released boxes whose guest on a backend was this one, newest
-- release first: a copy of one still on a host's disk is kept there, found.
SELECT * FROM boxes WHERE backend_id = $1 AND guest_ref = $2 AND state = 'released'
ORDER BY released_at DESC NULLS LAST, id;
