-- +goose Up
-- A working process holds, for its life, a session advisory lock named after
-- its River client ID (jobs' presence: hashtextextended('boxsnap worker ' ||
-- id, 0)); River records that ID in a job's attempted_by when the process
-- fetches it. boxsnap_worker_alive answers whether a live session holds that
-- lock: a process that died lost it with its connection, so the jobs it left
-- running are known to be nobody's, however recently it fetched them.
-- +goose StatementBegin
CREATE FUNCTION boxsnap_worker_alive(worker text) RETURNS boolean LANGUAGE sql VOLATILE AS $$
    SELECT worker IS NOT NULL AND EXISTS (
        SELECT 1 FROM pg_locks l, (SELECT hashtextextended('boxsnap worker ' || worker, 0) AS k) key
        WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
          AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
          AND l.classid = ((key.k >> 32) & 4294967295)::oid
          AND l.objid = (key.k & 4294967295)::oid)
$$;
-- +goose StatementEnd

-- +goose Down
DROP FUNCTION boxsnap_worker_alive(text);
