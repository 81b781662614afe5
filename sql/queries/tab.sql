-- The Snapshots tab's queries (app/snapshots/tab.go): its page of boxes with
-- their matching snapshots, its counts and its totals, each in the database
-- so the tab's cost follows the page, not the install. The indexes they read
-- are in migrations/00080_tab.sql.

-- name: TabPage :many
-- One page of the boxes with a snapshot that matches the search and filters,
-- in the sort's order, after the cursor (the last row of the page before):
-- page_size boxes at most, and, with row_budget, only as many whole boxes as
-- hold row_budget matching snapshots (the first box always). Every filter is
-- off when its argument is null (or false). search is an ILIKE pattern
-- ('%word%', its own % and _ escaped). thread, for an agent, keeps what its
-- thread may see (as MayAct says). The order is a numeric key ascending (a
-- descending sort's key is negated), then the box's name for the Box name
-- sort, then live boxes before released ones, then the name and the ID, so
-- the cursor is exact. matched is the box's matching snapshots in the sort's
-- order; boxes_matching and snapshots_matching count every page's, boxes_left
-- those from the cursor on.
WITH f AS NOT MATERIALIZED (
    SELECT s.id, s.box_id, s.taken_at,
        CASE WHEN sqlc.arg(sort)::text = 'largest' THEN coalesce(s.size_bytes, -1) END AS size,
        CASE WHEN sqlc.arg(sort)::text = 'price' THEN snapshot_monthly(s.price) END AS monthly
    FROM snapshots s
    WHERE (sqlc.narg(search)::text IS NULL
           OR s.name ILIKE sqlc.narg(search) OR s.note ILIKE sqlc.narg(search)
           OR s.box_id = ANY (ARRAY(
               SELECT sb.id FROM boxes sb WHERE sb.name ILIKE sqlc.narg(search)
               UNION
               SELECT sb.id FROM threads st JOIN boxes sb ON sb.thread_id = st.id WHERE st.title ILIKE sqlc.narg(search))))
      AND (sqlc.narg(backend_id)::text IS NULL OR s.box_id = ANY (ARRAY(
               SELECT wb.id FROM boxes wb WHERE wb.backend_id = sqlc.narg(backend_id) AND wb.host = sqlc.narg(host)::text)))
      AND (sqlc.narg(holds)::text IS NULL OR CASE WHEN s.scope = 'device' THEN 'device' ELSE s.holds END = sqlc.narg(holds))
      AND (sqlc.narg(by_kinds)::text[] IS NULL OR s.by_kind = ANY (sqlc.narg(by_kinds)))
      AND (NOT sqlc.arg(kept)::boolean OR s.kept_until IS NOT NULL)
      AND (sqlc.narg(automatic)::boolean IS NULL OR s.automatic = sqlc.narg(automatic))
      AND (NOT sqlc.arg(undos)::boolean OR (s.undo_of IS NOT NULL AND s.kept_until IS NULL))
      AND (sqlc.narg(soon_before)::timestamptz IS NULL OR s.kept_until < sqlc.narg(soon_before))
      -- An agent: on a box its thread runs on, what its agents took; on
      -- its thread's own box, also what nobody else's agent took that is
      -- its thread's or kept; never a released box's.
      AND (sqlc.narg(thread)::text IS NULL
           OR (s.box_id = ANY (ARRAY(
                   SELECT rb.id FROM boxes rb WHERE rb.state <> 'released'
                       AND rb.presence -> 'workspaces' @> jsonb_build_array(jsonb_build_object('thread', sqlc.narg(thread), 'runsOn', true))))
               AND s.by_kind = 'agent' AND s.by_thread_id = sqlc.narg(thread))
           OR (s.box_id = ANY (ARRAY(
                   SELECT ob.id FROM boxes ob WHERE ob.state <> 'released' AND ob.thread_id = sqlc.narg(thread)
                       AND NOT coalesce(ob.presence -> 'workspaces' @> jsonb_build_array(jsonb_build_object('thread', sqlc.narg(thread), 'runsOn', true)), false)))
               AND ((s.by_kind = 'agent' AND s.by_thread_id = sqlc.narg(thread))
                    OR (NOT (s.by_kind = 'agent' AND s.by_thread_id IS NOT NULL AND s.by_thread_id <> sqlc.narg(thread))
                        AND (s.owner_thread_id = sqlc.narg(thread) OR s.kept_until IS NOT NULL)))))
), m AS (
    SELECT box_id, count(*) AS matching, max(taken_at) AS newest, min(taken_at) AS oldest, max(size) AS largest, max(monthly) AS price
    FROM f GROUP BY box_id
), ranked AS (
    SELECT m.box_id, b.name AS box_name, (b.state = 'released')::int AS released,
        CASE sqlc.arg(sort)::text
            WHEN 'newest' THEN -extract(epoch FROM m.newest)
            WHEN 'oldest' THEN extract(epoch FROM m.oldest)
            WHEN 'largest' THEN -m.largest::numeric
            WHEN 'price' THEN -m.price
            ELSE 0::numeric END AS sort_key,
        CASE WHEN sqlc.arg(sort)::text = 'box' THEN b.name ELSE '' END AS sort_name,
        count(*) OVER () AS boxes_matching,
        sum(m.matching) OVER () AS snapshots_matching, m.matching
    FROM m JOIN boxes b ON b.id = m.box_id
), after AS (
    SELECT r.*, count(*) OVER () AS boxes_left,
        sum(r.matching) OVER (ORDER BY r.sort_key, r.sort_name, r.released, r.box_name, r.box_id) - r.matching AS rows_before
    FROM ranked r
    WHERE sqlc.narg(after_key)::text IS NULL
       OR (r.sort_key, r.sort_name, r.released, r.box_name, r.box_id) >
          (sqlc.narg(after_key)::text::numeric, CASE WHEN sqlc.arg(sort)::text = 'box' THEN sqlc.narg(after_name)::text ELSE '' END,
           sqlc.narg(after_released)::int, sqlc.narg(after_name)::text, sqlc.narg(after_id)::text)
)
SELECT a.box_id, a.box_name, a.released, a.sort_key::text AS sort_key, a.boxes_matching, a.snapshots_matching::bigint AS snapshots_matching,
    a.boxes_left,
    ARRAY(SELECT f.id FROM f WHERE f.box_id = a.box_id
          ORDER BY CASE sqlc.arg(sort)::text
                       WHEN 'oldest' THEN extract(epoch FROM f.taken_at)
                       WHEN 'largest' THEN -f.size::numeric
                       WHEN 'price' THEN -f.monthly
                       ELSE -extract(epoch FROM f.taken_at) END,
                   f.taken_at DESC, f.id)::text[] AS matched
FROM after a
WHERE a.rows_before = 0 OR sqlc.narg(row_budget)::bigint IS NULL OR a.rows_before + a.matching <= sqlc.narg(row_budget)
ORDER BY a.sort_key, a.sort_name, a.released, a.box_name, a.box_id
LIMIT sqlc.arg(page_size)::int;

-- name: TabBoxesByID :many
SELECT * FROM boxes WHERE id = ANY (sqlc.arg(ids)::text[]);

-- name: TabSnapshotsOfBoxes :many
SELECT * FROM snapshots WHERE box_id = ANY (sqlc.arg(box_ids)::text[]) ORDER BY box_id, taken_at DESC, id;

-- name: TabTally :many
-- The tab's counts, from snapshot_tally (migrations/00140_tab_tally.sql),
-- which triggers keep: by where the box lives, what the snapshot holds
-- ("device" for a device snapshot) and its price's currency: the filters'
-- counts, the line under the tabs (its count, undos apart, by agents, space
-- by host, each backend's monthly rate) and the failed takes that need the
-- owner. size_bytes sums the sizes as the rows say them (shown_bytes).
-- deltas is how many rows the sums read (TabTallyCompact folds them).
SELECT backend_id, host, holds, currency,
    sum(snapshots)::int AS snapshots,
    sum(by_you)::int AS by_you,
    sum(by_agents)::int AS by_agents,
    sum(kept)::int AS kept,
    sum(undos)::int AS undos,
    sum(failed)::int AS failed,
    sum(sized)::int AS sized,
    sum(size_bytes)::bigint AS size_bytes,
    sum(monthly)::float8 AS monthly,
    count(*)::int AS deltas
FROM snapshot_tally
GROUP BY 1, 2, 3, 4
HAVING sum(snapshots) <> 0
ORDER BY 1, 2, 3, 4;

-- name: TabTallyCompact :exec
-- Folds snapshot_tally's rows into one per group, dropping the empty ones.
-- It removes only the rows it sums: a writer's rows committed meanwhile
-- stay, and a compaction running at once skips the rows this one removed.
WITH gone AS (DELETE FROM snapshot_tally RETURNING *)
INSERT INTO snapshot_tally
SELECT backend_id, host, holds, currency, sum(snapshots), sum(by_you), sum(by_agents), sum(kept), sum(undos), sum(failed),
    sum(sized), sum(size_bytes), sum(monthly)
FROM gone
GROUP BY backend_id, host, holds, currency
HAVING sum(snapshots) <> 0;

-- name: TabSoon :one
-- The kept snapshots whose keep ends before soon_before (the tally cannot
-- keep a count that the clock changes), through snapshots_kept.
SELECT count(*)::int FROM snapshots WHERE kept_until < sqlc.arg(soon_before)::timestamptz;

-- name: TabTotals :one
-- The Boxes page's three tabs' counts: live machines, threads, and
-- snapshots unless the caller has counted them (0 then).
SELECT (SELECT count(*) FROM boxes WHERE released_at IS NULL)::int AS machines,
    (SELECT count(*) FROM threads)::int AS threads,
    (CASE WHEN sqlc.arg(count_snapshots)::boolean THEN (SELECT count(*) FROM snapshots) ELSE 0 END)::int AS snapshots;

-- name: TabBoxKinds :many
-- Each backend's kinds of box, for saying which backends' boxes have no
-- snapshots at all.
SELECT DISTINCT backend_id, kind FROM boxes ORDER BY backend_id, kind;

-- name: TabLiveBoxPerKind :many
-- One live box for each backend, kind and host (the first by name), in
-- name order: the boxes a host's plan is read through. It skips through
-- boxes_live_kind from one backend, kind and host to the next, reading one
-- entry for each, not every box.
WITH RECURSIVE k AS (
    (SELECT l.backend_id, l.kind, l.host, l.id FROM boxes l WHERE l.state = 'ready' AND l.released_at IS NULL
     ORDER BY l.backend_id, l.kind, l.host, l.name, l.id LIMIT 1)
    UNION ALL
    SELECT n.backend_id, n.kind, n.host, n.id FROM k CROSS JOIN LATERAL (
        SELECT l.backend_id, l.kind, l.host, l.id FROM boxes l
        WHERE l.state = 'ready' AND l.released_at IS NULL AND (l.backend_id, l.kind, l.host) > (k.backend_id, k.kind, k.host)
        ORDER BY l.backend_id, l.kind, l.host, l.name, l.id LIMIT 1) n
)
SELECT * FROM boxes WHERE id IN (SELECT k.id FROM k)
ORDER BY name, id;

-- name: TabNewestBoxes :many
-- The first view's order without reading the install: every box with
-- snapshots, newest snapshot first (ties by the snapshot's ID, highest
-- first), after the cursor, one row per box (its newest snapshot), read
-- backwards through snapshots_taken and stopping at page_size boxes.
SELECT s.box_id, s.taken_at, s.id
FROM snapshots s
WHERE (sqlc.narg(after_taken)::timestamptz IS NULL
       OR (s.taken_at, s.id) < (sqlc.narg(after_taken)::timestamptz, sqlc.narg(after_id)::text))
  AND NOT EXISTS (SELECT 1 FROM snapshots n WHERE n.box_id = s.box_id AND n.taken_at >= s.taken_at
                  AND (n.taken_at, n.id) > (s.taken_at, s.id))
ORDER BY s.taken_at DESC, s.id DESC
LIMIT sqlc.arg(page_size)::int;
