-- An agent's take in few statements (issue 10, Benchmarks: at most 10
-- queries a take). Each query here folds what a hot path read or wrote in
-- several round trips into one statement.

-- name: TakeAgentCall :one
-- What an agent's call needs before its tool runs, in one read: the live
-- thread its token names; the first of the boxes it has a workspace on (in
-- CoreBoxes' order) that is an execution machine whose turns are held, by a
-- request to restore it that still waits at @now or by a restore that runs
-- (section 5, "Holding turns on the box"); and whether the thread has
-- answers it was not told yet, or requests that expired unanswered at @now
-- (ApprovalNews then reads and tells them). No row: no live thread.
SELECT t.id,
    coalesce((
        SELECT b.name FROM boxes b
        WHERE b.presence -> 'workspaces' @> jsonb_build_array(jsonb_build_object('thread', t.id))
          AND b.presence -> 'workspaces' @> '[{"runsOn": true}]'::jsonb
          AND (EXISTS (SELECT 1 FROM approvals a WHERE a.state = 'pending' AND a.box_id = b.id AND a.execution AND a.expires_at > @now::timestamptz)
               OR EXISTS (SELECT 1 FROM operations o WHERE o.box_id = b.id AND o.kind = 'restore' AND o.state IN ('running', 'unknown')))
        ORDER BY (b.state = 'released'), b.name
        LIMIT 1), '')::text AS held_box,
    EXISTS (
        SELECT 1 FROM approvals a
        WHERE a.thread_id = t.id AND NOT a.reported
          AND ((a.state <> 'pending' AND a.answer IS NOT NULL) OR (a.state = 'pending' AND a.expires_at <= @now::timestamptz))
    ) AS news
FROM threads t
WHERE t.token_hash = @token_hash AND t.ended_at IS NULL;
