-- The reconcile's check that each box's guest is still on its backend.

-- name: GuestMissingMark :execrows
INSERT INTO guest_missing (box_id, guest, since) VALUES ($1, $2, $3) ON CONFLICT (box_id) DO NOTHING;

-- name: GuestMissingClear :exec
DELETE FROM guest_missing WHERE box_id = $1;
