-- The agent tools' retry keys (app/api's retry layer, through the core).

-- name: ToolAnswerByKey :one
SELECT * FROM tool_answers WHERE key = $1;

-- name: ToolAnswerKeep :exec
-- The first answer kept wins: two calls with one key at once keep one.
INSERT INTO tool_answers (key, tool, args, resolved, status, body)
VALUES (@key, @tool, @args, @resolved, @status, @body)
ON CONFLICT (key) DO NOTHING;

-- name: SweepToolAnswersOld :execrows
-- Housekeeping: retry keys kept longer than the core keeps them go.
DELETE FROM tool_answers WHERE created_at < @before;

-- name: SweepOpRequestKeysOld :execrows
-- Housekeeping: an ended operation's request key, kept as long as a tool
-- answer is, goes; the operation stays. A running or unknown one keeps it.
UPDATE operations SET request_key = NULL
WHERE request_key IS NOT NULL AND state IN ('done', 'failed') AND ended_at < @before;
