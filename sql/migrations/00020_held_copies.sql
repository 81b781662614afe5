-- Held copies and earlier guests (specification section 2, "A held copy"
-- and "Undoing a ZFS restore is a swap"; section 7): a snapshot that no
-- longer lives on its box's current guest says which guest holds it: its
-- held copy's, or the box's earlier guest's reference (a VMID).

-- +goose Up
ALTER TABLE snapshots ADD COLUMN guest_ref text;

-- +goose Down
ALTER TABLE snapshots DROP COLUMN guest_ref;
