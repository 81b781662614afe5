-- +goose Up
-- Packs: the content store's small objects put many to one bucket object,
-- as restic packs its blobs, so a take makes few requests. A pack is
-- claimed before its put (the sweep leaves it alone meanwhile, and frees
-- it after a kill), recorded stored once the put finished, and deleted by
-- the sweep only when no object row that is stored or claimed lies in it.
CREATE TABLE content_packs (
    key           text PRIMARY KEY,        -- the pack's key in the bucket
    size          bigint NOT NULL,         -- its bytes, index and trailer included
    stored        boolean NOT NULL DEFAULT false,
    claimed_until timestamptz
);

-- Where an object lies when it is in a pack; NULL when it is an object of
-- its own. A pack deleted leaves the rows of its freed objects unplaced.
ALTER TABLE content_objects
    ADD COLUMN pack text REFERENCES content_packs (key) ON DELETE SET NULL,
    ADD COLUMN pack_offset bigint,
    ADD COLUMN pack_length bigint;
CREATE INDEX content_objects_pack ON content_objects (pack) WHERE pack IS NOT NULL;

-- +goose Down
DROP INDEX content_objects_pack;
ALTER TABLE content_objects DROP COLUMN pack, DROP COLUMN pack_offset, DROP COLUMN pack_length;
DROP TABLE content_packs;
