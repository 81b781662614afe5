-- +goose Up
-- An operation whose job snoozed while its provider task runs: the job, not a
-- worker, waits; when it wakes the engine asks the provider where the task
-- got to.
ALTER TABLE operations ADD COLUMN task_waiting boolean NOT NULL DEFAULT false;

-- +goose Down
ALTER TABLE operations DROP COLUMN task_waiting;
