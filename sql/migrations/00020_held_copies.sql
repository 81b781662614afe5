-- Held copies and earlier guests (a kept snapshot past its box's release, and
-- the guest a ZFS restore's undo leaves behind): a snapshot that no longer
-- lives on its box's current guest says which guest holds it: its held
-- copy's, or the box's earlier guest's reference (a VMID).

-- +goose Up
ALTER TABLE snapshots ADD COLUMN guest_ref text;

-- +goose Down
ALTER TABLE snapshots DROP COLUMN guest_ref;
