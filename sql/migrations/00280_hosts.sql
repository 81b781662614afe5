-- +goose Up
-- The hosts boxsnap runs on: each process (serve, work, the embedded run)
-- records the host it runs on (BOXSNAP_HOST) and keeps last_seen_at fresh
-- while it lives. A person marks a host gone for good (gone_at) before
-- another host may take its boxes over.
CREATE TABLE hosts (
    name          text PRIMARY KEY,
    first_seen_at timestamptz NOT NULL DEFAULT now(),
    last_seen_at  timestamptz NOT NULL DEFAULT now(),
    gone_at       timestamptz,                      -- marked gone for good by a person
    gone_by       text                              -- who marked it
);

-- A box whose data lives on one host's disk is owned by that host: its
-- operations run there only (a River queue per host). NULL: any host may
-- run them (a backend reached over the network: Docker, Proxmox, QEMU).
ALTER TABLE boxes ADD COLUMN owner_host text;
CREATE INDEX boxes_owner_host ON boxes (owner_host) WHERE owner_host IS NOT NULL;

-- A local box (and a held copy, a box of the local backend too) is owned by
-- the host its guest is on, the host the local backend reports (BOXSNAP_HOST):
-- one rule here, so every way a box row is made (a new box, a fork, an
-- import, a held copy) records it.
-- +goose StatementBegin
CREATE FUNCTION boxes_owner_host() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.owner_host IS NULL AND NEW.host <> ''
       AND EXISTS (SELECT 1 FROM backends WHERE id = NEW.backend_id AND kind = 'local') THEN
        NEW.owner_host := NEW.host;
    END IF;
    RETURN NEW;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER boxes_owner_host BEFORE INSERT ON boxes FOR EACH ROW EXECUTE FUNCTION boxes_owner_host();

UPDATE boxes b SET owner_host = b.host
FROM backends be WHERE be.id = b.backend_id AND be.kind = 'local' AND b.host <> '' AND b.state <> 'released';

-- +goose Down
DROP TRIGGER boxes_owner_host ON boxes;
DROP FUNCTION boxes_owner_host();
ALTER TABLE boxes DROP COLUMN owner_host;
DROP TABLE hosts;
