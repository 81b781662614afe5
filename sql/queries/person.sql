-- name: PersonSnapshotsOfBackend :many
SELECT * FROM snapshots WHERE backend_id = $1 ORDER BY box_name, taken_at, id;

-- name: PersonSnapshotForget :execrows
DELETE FROM snapshots s WHERE s.id = $1 AND s.backend_id = $2
AND NOT EXISTS (SELECT 1 FROM operations o WHERE o.state IN ('running', 'unknown') AND s.id = ANY (o.snapshots));

-- name: PersonCeilingLock :exec
SELECT pg_advisory_xact_lock(hashtext('boxsnap-ceiling:' || sqlc.arg(backend_id)::text));

-- name: PersonPaidHeld :many
SELECT id, price, size_bytes FROM snapshots
WHERE backend_id = $1 AND price IS NOT NULL AND state <> 'failed';

-- name: PersonChargesSince :many
SELECT snapshot_id, name, price, size_bytes, held_from, held_until FROM snapshot_charges
WHERE backend_id = sqlc.arg(backend_id) AND (held_until IS NULL OR held_until > sqlc.arg(since)::timestamptz);

-- name: PersonApprovalInsert :exec
INSERT INTO approvals (id, box_id, snapshot_id, thread_id, plan, goes, execution, asked_at, expires_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9);

-- name: PersonApprovalGet :one
SELECT * FROM approvals WHERE id = $1;

-- name: PersonApprovalsPending :many
SELECT * FROM approvals WHERE state = 'pending' ORDER BY asked_at, id;

-- name: PersonApprovalExpire :execrows
UPDATE approvals SET state = 'expired', answered_at = expires_at, answer = $2
WHERE id = $1 AND state = 'pending';

-- name: PersonApprovalAnswer :execrows
UPDATE approvals SET state = $2, answered_at = $3, answer = $4, operation_id = $5
WHERE id = $1 AND state = 'pending';

-- name: PersonApprovalReplan :exec
UPDATE approvals SET plan = $2, goes = $3, asks = asks + 1 WHERE id = $1 AND state = 'pending';

-- name: PersonApprovalNews :many
UPDATE approvals SET reported = true
WHERE thread_id = $1 AND state <> 'pending' AND NOT reported AND answer IS NOT NULL
RETURNING answer;

-- name: PersonApprovalsEnded :many
-- A thread's approved requests not yet told whose restore has ended (done,
-- failed or unknown): their answers are to say how it ended.
SELECT a.* FROM approvals a JOIN operations o ON o.id = a.operation_id
WHERE a.thread_id = $1 AND a.state = 'approved' AND NOT a.reported AND o.state IN ('done', 'failed', 'unknown')
ORDER BY a.asked_at, a.id;

-- name: PersonApprovalOutcome :execrows
-- An approved request's answer, rewritten to say how its restore ended.
UPDATE approvals SET answer = $2 WHERE id = $1 AND state = 'approved' AND answer IS DISTINCT FROM $2;

-- name: PersonRunningRestores :one
SELECT count(*) FROM operations WHERE box_id = $1 AND kind = 'restore' AND state IN ('running', 'unknown');

-- name: PersonOpReservePrice :exec
-- The price of the undo an admitted operation will take, reserved against
-- the ceiling of its backend until the undo has a record or the operation ends.
UPDATE operations SET price_backend = sqlc.arg(backend_id)::text, price_reserved = sqlc.arg(price)::jsonb
WHERE id = sqlc.arg(id);

-- name: PersonPriceReserved :many
SELECT price_reserved FROM operations
WHERE price_backend = $1 AND price_reserved IS NOT NULL AND state IN ('running', 'unknown') AND undo_id IS NULL;
