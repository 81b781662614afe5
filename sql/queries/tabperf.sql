-- The Boxes page's tabs at any size (issue 10): what the Snapshots tab's
-- notices, the Machines tab and the Select mode's bulk actions read, each
-- through an index, so their cost follows the page or the selection, not
-- the install. The indexes are in migrations/00140_tab_tally.sql.

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
