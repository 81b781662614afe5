-- +goose Up
-- The tab's space by host is the sum of the sizes its rows show, not of
-- the bytes: shown_bytes rounds a size as providers.Shown does (below 1 KB
-- the bytes, else half up to the unit said: a KB, an MB, a tenth of a GB,
-- a GB), and the tally sums it, so two rows of "1 KB" total "2 KB".
-- +goose StatementBegin
CREATE FUNCTION shown_bytes(n bigint) RETURNS bigint LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE
        WHEN n < 1000 THEN n
        WHEN n < 1000000 THEN (n + 500) / 1000 * 1000
        WHEN n < 100000000 THEN (n + 500000) / 1000000 * 1000000
        WHEN n < 10000000000 THEN (n + 50000000) / 100000000 * 100000000
        ELSE (n + 500000000) / 1000000000 * 1000000000
    END
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION snapshot_tally_of(rows snapshots[], sign int, backend text DEFAULT NULL, place text DEFAULT NULL)
RETURNS SETOF snapshot_tally LANGUAGE sql STABLE AS $$
    SELECT coalesce(backend, b.backend_id), coalesce(place, b.host),
        CASE WHEN s.scope = 'device' THEN 'device' ELSE s.holds END,
        coalesce(s.price ->> 'currency', ''),
        sign * count(*),
        sign * count(*) FILTER (WHERE s.by_kind IN ('owner', 'cli')),
        sign * count(*) FILTER (WHERE s.by_kind = 'agent'),
        sign * count(*) FILTER (WHERE s.kept_until IS NOT NULL),
        sign * count(*) FILTER (WHERE s.undo_of IS NOT NULL AND s.kept_until IS NULL),
        sign * count(*) FILTER (WHERE s.state = 'failed'),
        sign * count(s.size_bytes),
        sign * coalesce(sum(shown_bytes(s.size_bytes)), 0),
        sign * coalesce(sum(snapshot_monthly(s.price)) FILTER (WHERE s.price IS NOT NULL), 0)
    FROM unnest(rows) s
    JOIN boxes b ON b.id = s.box_id
    GROUP BY 1, 2, 3, 4
$$;
-- +goose StatementEnd

DELETE FROM snapshot_tally;
INSERT INTO snapshot_tally SELECT * FROM snapshot_tally_of(ARRAY(SELECT s FROM snapshots s), 1);

-- +goose Down
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION snapshot_tally_of(rows snapshots[], sign int, backend text DEFAULT NULL, place text DEFAULT NULL)
RETURNS SETOF snapshot_tally LANGUAGE sql STABLE AS $$
    SELECT coalesce(backend, b.backend_id), coalesce(place, b.host),
        CASE WHEN s.scope = 'device' THEN 'device' ELSE s.holds END,
        coalesce(s.price ->> 'currency', ''),
        sign * count(*),
        sign * count(*) FILTER (WHERE s.by_kind IN ('owner', 'cli')),
        sign * count(*) FILTER (WHERE s.by_kind = 'agent'),
        sign * count(*) FILTER (WHERE s.kept_until IS NOT NULL),
        sign * count(*) FILTER (WHERE s.undo_of IS NOT NULL AND s.kept_until IS NULL),
        sign * count(*) FILTER (WHERE s.state = 'failed'),
        sign * count(s.size_bytes),
        sign * coalesce(sum(s.size_bytes), 0),
        sign * coalesce(sum(snapshot_monthly(s.price)) FILTER (WHERE s.price IS NOT NULL), 0)
    FROM unnest(rows) s
    JOIN boxes b ON b.id = s.box_id
    GROUP BY 1, 2, 3, 4
$$;
-- +goose StatementEnd

DELETE FROM snapshot_tally;
INSERT INTO snapshot_tally SELECT * FROM snapshot_tally_of(ARRAY(SELECT s FROM snapshots s), 1);

DROP FUNCTION shown_bytes(bigint);
