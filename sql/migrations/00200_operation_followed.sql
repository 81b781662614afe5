-- +goose Up
-- An operation another one of its box waits behind: an admission that records
-- an operation as waiting marks the box's running ones followed, under the
-- box's lock. An end of an operation nobody follows is one statement, with no
-- transaction, as nothing waits for it to queue; one that is followed queues
-- the next in the end's transaction. The operations running or unconfirmed
-- now are marked, so an end never misses one that waits already.
ALTER TABLE operations ADD COLUMN followed boolean NOT NULL DEFAULT false;
UPDATE operations SET followed = true WHERE state IN ('running', 'unknown');

-- +goose Down
ALTER TABLE operations DROP COLUMN followed;
