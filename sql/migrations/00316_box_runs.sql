-- +goose Up
-- How each box runs, as it was made: its command, user, environment,
-- limits and network (app/snapshots BoxRun, as JSON). A box moved or taken
-- over onto another host is made there with it, as its own host holds it
-- in its data folder and no snapshot records its environment. The
-- environment may hold secrets, as a box template's does: it is read only
-- to make the box anew, never shown.
CREATE TABLE box_runs (
    box_id text PRIMARY KEY REFERENCES boxes (id) ON DELETE CASCADE,
    run    jsonb NOT NULL
);

-- +goose Down
DROP TABLE box_runs;
