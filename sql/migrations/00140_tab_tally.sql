-- The Snapshots tab's counts without reading the install: the counts of its
-- filters and of the line under the tabs (TabTally) are kept in
-- snapshot_tally by triggers, in the same transaction as the records they
-- count, so the tab reads a few rows whatever the install holds.
--
-- snapshot_tally holds signed deltas, one row per group a statement changed
-- (where the box lives, what the snapshot holds, its price's currency):
-- a writer only inserts, so takes running at once never wait on each other
-- for a counter row (an upsert would hold the group's row until commit, and
-- two transactions touching two groups in opposite orders would deadlock).
-- The tab sums the rows of each group; when they grow, TabTallyCompact folds
-- them into one row per group (a DELETE ... RETURNING that only removes the
-- rows it sums, so compactions and writers may run at once).
--
-- The counts are of the box's backend and host, as the Where filter reads
-- them: a box that moves to another host (a held copy's guest) moves its
-- snapshots' counts with it.

-- +goose Up
CREATE TABLE snapshot_tally (
    backend_id text    NOT NULL,
    host       text    NOT NULL,
    holds      text    NOT NULL, -- disk, disk-and-memory, or device for a device snapshot
    currency   text    NOT NULL, -- the price's, '' for none
    snapshots  bigint  NOT NULL,
    by_you     bigint  NOT NULL, -- taken by the owner or the CLI
    by_agents  bigint  NOT NULL,
    kept       bigint  NOT NULL,
    undos      bigint  NOT NULL, -- undos not kept
    failed     bigint  NOT NULL,
    sized      bigint  NOT NULL, -- of known size
    size_bytes numeric NOT NULL,
    monthly    numeric NOT NULL  -- snapshot_monthly of the priced ones
);

-- snapshot_tally_of is the tally of rows, times sign (1 or -1), grouped; on
-- their boxes' backend and host, or on backend and host when given (a box's
-- old place, when it moves).
-- +goose StatementBegin
CREATE FUNCTION snapshot_tally_of(rows snapshots[], sign int, backend text DEFAULT NULL, place text DEFAULT NULL)
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

-- +goose StatementBegin
CREATE FUNCTION snapshot_tally_rows() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO snapshot_tally SELECT * FROM snapshot_tally_of(ARRAY(SELECT n::snapshots FROM tally_new n), 1);
    ELSE
        INSERT INTO snapshot_tally SELECT * FROM snapshot_tally_of(ARRAY(SELECT o::snapshots FROM tally_old o), -1);
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION snapshot_tally_row() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO snapshot_tally
    SELECT * FROM snapshot_tally_of(ARRAY[OLD], -1) UNION ALL SELECT * FROM snapshot_tally_of(ARRAY[NEW], 1);
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION snapshot_tally_box() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO snapshot_tally
    SELECT * FROM snapshot_tally_of(ARRAY(SELECT s FROM snapshots s WHERE s.box_id = NEW.id), -1, OLD.backend_id, OLD.host)
    UNION ALL SELECT * FROM snapshot_tally_of(ARRAY(SELECT s FROM snapshots s WHERE s.box_id = NEW.id), 1);
    RETURN NULL;
END
$$;
-- +goose StatementEnd

CREATE TRIGGER snapshots_tally_insert AFTER INSERT ON snapshots
    REFERENCING NEW TABLE AS tally_new FOR EACH STATEMENT EXECUTE FUNCTION snapshot_tally_rows();
CREATE TRIGGER snapshots_tally_delete AFTER DELETE ON snapshots
    REFERENCING OLD TABLE AS tally_old FOR EACH STATEMENT EXECUTE FUNCTION snapshot_tally_rows();
-- Only an update that changes what the tally counts writes to it.
CREATE TRIGGER snapshots_tally_update AFTER UPDATE ON snapshots FOR EACH ROW
    WHEN ((OLD.box_id, OLD.scope, OLD.holds, OLD.price, OLD.by_kind, OLD.kept_until IS NULL, OLD.undo_of IS NULL, OLD.state = 'failed', OLD.size_bytes)
          IS DISTINCT FROM
          (NEW.box_id, NEW.scope, NEW.holds, NEW.price, NEW.by_kind, NEW.kept_until IS NULL, NEW.undo_of IS NULL, NEW.state = 'failed', NEW.size_bytes))
    EXECUTE FUNCTION snapshot_tally_row();
CREATE TRIGGER boxes_tally_move AFTER UPDATE OF backend_id, host ON boxes FOR EACH ROW
    WHEN ((OLD.backend_id, OLD.host) IS DISTINCT FROM (NEW.backend_id, NEW.host))
    EXECUTE FUNCTION snapshot_tally_box();

INSERT INTO snapshot_tally SELECT * FROM snapshot_tally_of(ARRAY(SELECT s FROM snapshots s), 1);

-- The backends no longer in settings whose snapshots are still recorded
-- (PersonGoneBackends) are read backend by backend from the backends table
-- through this index, not from every snapshot.
CREATE INDEX snapshots_backend ON snapshots (backend_id);

-- A host's plan is read through one live box of each backend, kind and
-- host (TabLiveBoxPerKind), found by skipping through this index.
CREATE INDEX boxes_live_kind ON boxes (backend_id, kind, host, name, id) WHERE state = 'ready' AND released_at IS NULL;

-- +goose Down
DROP INDEX boxes_live_kind;
DROP INDEX snapshots_backend;
DROP TRIGGER boxes_tally_move ON boxes;
DROP TRIGGER snapshots_tally_update ON snapshots;
DROP TRIGGER snapshots_tally_delete ON snapshots;
DROP TRIGGER snapshots_tally_insert ON snapshots;
DROP FUNCTION snapshot_tally_box();
DROP FUNCTION snapshot_tally_row();
DROP FUNCTION snapshot_tally_rows();
DROP FUNCTION snapshot_tally_of(snapshots[], int, text, text);
DROP TABLE snapshot_tally;
