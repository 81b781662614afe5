-- Ancestry and heads, and the box log of downloads.

-- name: LookHeadSet :exec
-- A restore, or a fork's new box: the head is set to $2, back or anywhere.
UPDATE boxes SET head_id = $2 WHERE id = $1;

-- name: LookLineage :many
-- A snapshot and its ancestors, nearest first, as far as their records go.
WITH RECURSIVE chain(id, parent_id, depth) AS (
    SELECT snapshots.id, snapshots.parent_id, 0 FROM snapshots WHERE snapshots.id = @id
    UNION ALL
    SELECT s.id, s.parent_id, c.depth + 1 FROM snapshots s JOIN chain c ON s.id = c.parent_id WHERE c.depth < @max_depth::int
)
SELECT s.* FROM chain JOIN snapshots s ON s.id = chain.id ORDER BY chain.depth;
