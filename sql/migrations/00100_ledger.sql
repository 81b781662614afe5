-- The paid ceiling's ledger: every paid snapshot's charge, from the moment
-- its record holds a price until the record goes or its take fails. It keeps
-- deleted snapshots' charges, so this month's spend counts them; a trigger on
-- snapshots keeps it, whatever path deletes a record.

-- +goose Up
CREATE TABLE snapshot_charges (
    snapshot_id text        PRIMARY KEY,
    backend_id  text        NOT NULL,
    box_id      text        NOT NULL,
    name        text        NOT NULL,
    price       jsonb       NOT NULL,
    size_bytes  bigint,
    held_from   timestamptz NOT NULL DEFAULT now(),
    held_until  timestamptz
);
CREATE INDEX snapshot_charges_backend ON snapshot_charges (backend_id, held_until);

-- +goose StatementBegin
CREATE FUNCTION snapshot_charges_keep() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        UPDATE snapshot_charges SET held_until = now() WHERE snapshot_id = OLD.id AND held_until IS NULL;
        RETURN OLD;
    END IF;
    IF NEW.price IS NOT NULL THEN
        INSERT INTO snapshot_charges (snapshot_id, backend_id, box_id, name, price, size_bytes)
        VALUES (NEW.id, NEW.backend_id, NEW.box_id, NEW.name, NEW.price, NEW.size_bytes)
        ON CONFLICT (snapshot_id) DO UPDATE SET price = EXCLUDED.price, size_bytes = EXCLUDED.size_bytes, name = EXCLUDED.name;
        IF NEW.state = 'failed' THEN
            UPDATE snapshot_charges SET held_until = coalesce(held_until, now()) WHERE snapshot_id = NEW.id;
        END IF;
    END IF;
    RETURN NEW;
END
$$;
-- +goose StatementEnd

CREATE TRIGGER snapshots_charges AFTER INSERT OR UPDATE OF price, size_bytes, state, name OR DELETE ON snapshots
    FOR EACH ROW EXECUTE FUNCTION snapshot_charges_keep();

-- +goose Down
DROP TRIGGER snapshots_charges ON snapshots;
DROP FUNCTION snapshot_charges_keep();
DROP TABLE snapshot_charges;
