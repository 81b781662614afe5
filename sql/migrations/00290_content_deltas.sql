-- +goose Up
-- A snapshot names in content_names only the objects its base snapshot
-- does not hold, so a take costs rows in proportion to what changed. What
-- a snapshot holds in full is its base's set, less its drops, plus its
-- names; a snapshot with no base names all it holds. Every object a
-- snapshot holds is therefore named by it or by one of its bases, which
-- keep one another alive: a base is deleted only after its names and
-- drops are handed down to its children, in one transaction.
CREATE TABLE content_snapshots (
    snapshot_id text PRIMARY KEY,
    -- The snapshot this one's names and drops are relative to; NULL when
    -- it names everything it holds.
    base_id     text REFERENCES content_snapshots (snapshot_id) ON DELETE RESTRICT,
    held        bigint NOT NULL, -- how many objects it holds in full
    -- SHA-256 (hex) of the keys it holds in full, sorted bytewise, each
    -- followed by a newline: a take naming over it checks its own idea of
    -- the base's keys against this before it relies on them.
    digest      text   NOT NULL
);
CREATE INDEX content_snapshots_base ON content_snapshots (base_id) WHERE base_id IS NOT NULL;

-- The objects a snapshot's base holds and it does not.
CREATE TABLE content_drops (
    snapshot_id text NOT NULL REFERENCES content_snapshots (snapshot_id) ON DELETE RESTRICT,
    key         text NOT NULL,
    PRIMARY KEY (snapshot_id, key)
);

-- The ledgers of today: every snapshot names all it holds, with no base.
INSERT INTO content_snapshots (snapshot_id, base_id, held, digest)
SELECT snapshot_id, NULL, count(*),
       encode(sha256(convert_to(string_agg(key || E'\n', '' ORDER BY key COLLATE "C"), 'UTF8')), 'hex')
FROM content_names GROUP BY snapshot_id;

ALTER TABLE content_names ADD CONSTRAINT content_names_snapshot
    FOREIGN KEY (snapshot_id) REFERENCES content_snapshots (snapshot_id) ON DELETE RESTRICT;

-- +goose Down
-- Each snapshot names all it holds again: what each of its bases names,
-- less what a snapshot between them drops.
WITH RECURSIVE chain (snapshot_id, holder, depth) AS (
    SELECT snapshot_id, snapshot_id, 0 FROM content_snapshots
    UNION ALL
    SELECT c.snapshot_id, s.base_id, c.depth + 1
    FROM chain c JOIN content_snapshots s ON s.snapshot_id = c.holder
    WHERE s.base_id IS NOT NULL
)
INSERT INTO content_names (snapshot_id, key)
SELECT c.snapshot_id, n.key
FROM chain c JOIN content_names n ON n.snapshot_id = c.holder
WHERE c.depth > 0
  AND NOT EXISTS (SELECT 1 FROM chain c2 JOIN content_drops d ON d.snapshot_id = c2.holder AND d.key = n.key
                  WHERE c2.snapshot_id = c.snapshot_id AND c2.depth < c.depth)
ON CONFLICT DO NOTHING;
ALTER TABLE content_names DROP CONSTRAINT content_names_snapshot;
DROP TABLE content_drops;
DROP TABLE content_snapshots;
