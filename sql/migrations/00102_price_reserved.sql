-- The paid ceiling's reservation: the price of a snapshot an admitted
-- operation will make but has not recorded yet (a restore's or a reset's
-- undo), reserved on the operation at its admission so that two admissions at
-- once cannot both pass on the same room under the ceiling. It counts while
-- the operation runs and its undo has no record.

-- +goose Up
ALTER TABLE operations ADD COLUMN price_backend text, ADD COLUMN price_reserved jsonb;

-- +goose Down
ALTER TABLE operations DROP COLUMN price_backend, DROP COLUMN price_reserved;
