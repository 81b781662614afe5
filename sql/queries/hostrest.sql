-- What another host may read of a local snapshot (app/snapshots/hosts):
-- the database's record of it, before its manifest is fetched from the
-- content store, so a snapshot deleted or being deleted is never brought
-- back on a host that did not hold it.

-- name: SnapshotStateByRef :one
-- The state of the snapshot the backend knows by ref; no row: deleted.
SELECT state FROM snapshots WHERE backend_id = @backend_id AND ref = @ref
ORDER BY state_at DESC LIMIT 1;

-- name: BoxesOwnedElsewhere :many
-- The boxes another host owns: their data is on that host's disk, so only
-- that host checks them for automatic history.
SELECT id FROM boxes WHERE owner_host IS NOT NULL AND owner_host <> @host AND state <> 'released';
