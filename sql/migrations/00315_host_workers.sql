-- +goose Up
-- When a process that runs River's workers on a host last beat: a host
-- whose processes serve pages only (serve --workers=false) is seen but
-- runs nothing of its queue, so each host's own work is queued only on
-- hosts whose workers beat lately, and the Hosts page says when a host's
-- queue holds work that no live worker will run.
ALTER TABLE hosts ADD COLUMN worked_at timestamptz;

-- +goose Down
ALTER TABLE hosts DROP COLUMN worked_at;
