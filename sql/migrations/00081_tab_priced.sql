-- +goose Up
-- The line under the Snapshots tab says each paid backend's rate held and
-- warns past its ceiling (PersonPaidHeld, once per backend): it reads the
-- priced snapshots alone, not the install.
CREATE INDEX snapshots_priced ON snapshots (backend_id) WHERE price IS NOT NULL;

-- +goose Down
DROP INDEX snapshots_priced;
