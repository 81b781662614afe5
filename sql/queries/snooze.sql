-- name: SnoozeOpLogged :one
-- Whether an operation already wrote an event of this kind in its box's log:
-- a run resumed after its provider task's snooze tells nothing twice.
SELECT EXISTS (SELECT 1 FROM box_log WHERE box_id = @box_id AND operation_id = @operation_id::text AND kind = @kind)::bool AS logged;
