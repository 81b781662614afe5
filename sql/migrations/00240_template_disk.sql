-- +goose Up
-- A box template's disk bound: what a box made from it may hold on disk
-- while it runs (0: the backend's default, 16 GiB on the local backend).
ALTER TABLE box_templates ADD COLUMN disk_bytes bigint NOT NULL DEFAULT 0 CHECK (disk_bytes >= 0);

-- +goose Down
ALTER TABLE box_templates DROP COLUMN disk_bytes;
