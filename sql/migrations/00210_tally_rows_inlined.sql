-- +goose Up
-- The tally's statement trigger (00140) hands snapshot_tally_of the rows a
-- statement inserted or deleted through a plpgsql variable, not a
-- sub-select in the call: a call whose argument holds a sub-select is not
-- inlined, so each take's admission planned the function's query anew
-- (about 1 ms of the server's CPU per take, more than the rest of the
-- admission's statement); inlined, its plan is cached with the trigger's.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION snapshot_tally_rows() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    changed snapshots[];
BEGIN
    IF TG_OP = 'INSERT' THEN
        changed := ARRAY(SELECT n::snapshots FROM tally_new n);
        INSERT INTO snapshot_tally SELECT * FROM snapshot_tally_of(changed, 1);
    ELSE
        changed := ARRAY(SELECT o::snapshots FROM tally_old o);
        INSERT INTO snapshot_tally SELECT * FROM snapshot_tally_of(changed, -1);
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- +goose Down
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION snapshot_tally_rows() RETURNS trigger LANGUAGE plpgsql AS $$
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
