-- +goose Up
-- The Snapshots tab in SQL: its search, filters, counts, sort and pages run
-- in the database (sql/queries/tab.sql), so its cost follows the page, not
-- the install.
--
-- The search (a substring of a snapshot's name or note, its box's name or
-- its thread's title, any case) reads trigram indexes; the Kept and "goes
-- within 7 days" filters read the kept snapshots alone; the first view reads
-- the newest snapshots alone; the page's rows are read by box through
-- snapshots_box.
CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE INDEX snapshots_name_trgm ON snapshots USING gin (name gin_trgm_ops);
CREATE INDEX snapshots_note_trgm ON snapshots USING gin (note gin_trgm_ops);
CREATE INDEX boxes_name_trgm ON boxes USING gin (name gin_trgm_ops);
CREATE INDEX snapshots_kept ON snapshots (kept_until) WHERE kept_until IS NOT NULL;
-- The first view (no search or filter, newest first) walks the snapshots
-- newest first and stops at a page of boxes.
CREATE INDEX snapshots_taken ON snapshots (taken_at, id);

-- What a snapshot's price comes to a month, as the pages say it (a price
-- per day is 30 days' worth; an unknown price or one per GB-month is 0):
-- the tab sorts by it and sums it per backend.
CREATE FUNCTION snapshot_monthly(price jsonb) RETURNS numeric
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE
    WHEN price IS NULL OR jsonb_typeof(price) <> 'object' OR NOT coalesce((price ->> 'known')::boolean, false) THEN 0
    WHEN price ->> 'per' = 'day' THEN coalesce((price ->> 'amount')::numeric, 0) * 30
    WHEN price ->> 'per' = 'month' THEN coalesce((price ->> 'amount')::numeric, 0)
    ELSE 0
END;

-- +goose Down
DROP FUNCTION snapshot_monthly(jsonb);
DROP INDEX snapshots_taken;
DROP INDEX snapshots_kept;
DROP INDEX boxes_name_trgm;
DROP INDEX snapshots_note_trgm;
DROP INDEX snapshots_name_trgm;
