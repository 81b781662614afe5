-- +goose Up
-- Whether a restore's box ran just before the restore stopped it: written
-- with the stop's step, before the stop, so a restore resumed past its stop
-- starts the box again only when it ran, and says so truly. NULL: not
-- read (any other operation, or a box whose state could not be read).
ALTER TABLE operations ADD COLUMN box_ran boolean;

-- +goose Down
ALTER TABLE operations DROP COLUMN box_ran;
