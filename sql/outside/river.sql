-- River's job table, as far as sql/queries read it, for sqlc's checking
-- only: River's own migrator makes the real table (store.Migrate), and
-- nothing applies this file.

CREATE TYPE river_job_state AS ENUM ('available', 'cancelled', 'completed', 'discarded', 'pending', 'retryable', 'running', 'scheduled');

CREATE TABLE river_job (
    id           bigserial PRIMARY KEY,
    state        river_job_state NOT NULL DEFAULT 'available',
    attempted_at timestamptz,
    finalized_at timestamptz,
    args         jsonb,
    kind         text NOT NULL,
    queue        text NOT NULL DEFAULT 'default'
);
