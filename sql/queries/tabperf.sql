-- The Boxes page's tabs at any size: what the Snapshots tab's notices, the
-- Machines tab and the Select mode's bulk actions read, each through an
-- index, so their cost follows the page or the selection, not the install.
-- The indexes are in migrations/00140_tab_tally.sql.

-- name: TabGoneBackendIDs :many
-- The backends boxsnap has recorded that are not in settings (every
-- snapshot's backend has a row here): a few rows, whatever the install.
SELECT id FROM backends WHERE NOT (id = ANY (sqlc.arg(in_settings)::text[])) ORDER BY id;

-- name: TabGoneBackendSnapshots :many
-- What the snapshots of backends no longer in settings come to, through
-- snapshots_backend: only those backends' snapshots are read.
SELECT backend_id, count(*)::int AS snapshots, coalesce(sum(size_bytes), 0)::bigint AS bytes
FROM snapshots WHERE backend_id = ANY (sqlc.arg(gone)::text[])
GROUP BY backend_id ORDER BY backend_id;

-- name: TabMachines :many
-- One page of the Machines tab: live boxes, or released ones, by name,
-- after the cursor (the last box of the page before), through
-- boxes_machines or boxes_released; a box in the trash is on neither.
SELECT * FROM boxes
WHERE state <> 'trashed'
  AND CASE WHEN sqlc.arg(released)::boolean THEN released_at IS NOT NULL ELSE released_at IS NULL END
  AND (sqlc.narg(after_name)::text IS NULL OR (name, id) > (sqlc.narg(after_name)::text, sqlc.narg(after_id)::text))
ORDER BY name, id
LIMIT sqlc.arg(page_size)::int;

-- name: TabBoxCounts :many
-- The counts of each of a page's boxes' snapshots, by the core's one
-- counting rule (Counts, CountOf): kept ones, undos not kept, failed takes,
-- agents' and those toward the per-box limit; through snapshots_box.
SELECT box_id,
    count(*)::int AS snapshots,
    count(*) FILTER (WHERE kept_until IS NOT NULL)::int AS kept,
    count(*) FILTER (WHERE undo_of IS NOT NULL AND kept_until IS NULL)::int AS undos,
    count(*) FILTER (WHERE state = 'failed')::int AS failed,
    count(*) FILTER (WHERE by_kind = 'agent')::int AS by_agents,
    count(*) FILTER (WHERE NOT (undo_of IS NOT NULL AND kept_until IS NULL) AND NOT automatic
                     AND state NOT IN ('failed', 'deleting') AND guest = 'current')::int AS to_limit
FROM snapshots
WHERE box_id = ANY (sqlc.arg(box_ids)::text[])
GROUP BY box_id;

-- name: TabSnapshotsByID :many
-- The snapshots a person selected, and no other, through snapshots_pkey.
SELECT * FROM snapshots WHERE id = ANY (sqlc.arg(ids)::text[]);
