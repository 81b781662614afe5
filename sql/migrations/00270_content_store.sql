-- +goose Up
-- The local backend's content store in an S3 bucket: which objects it holds
-- and which snapshot names which object. Freeing is decided here, never by
-- listing the bucket: an object is deleted only when no snapshot names it
-- and no take's claim on it is still running.
CREATE TABLE content_objects (
    key           text PRIMARY KEY,         -- the object's key in the bucket
    stored        boolean     NOT NULL DEFAULT false, -- a put of it finished
    -- A take about to ship the object claims it until then: the sweep
    -- leaves it alone, so the take may rely on stored until it names it.
    claimed_until timestamptz
);

-- A snapshot names an object once its manifest is in the bucket; the
-- reference keeps a sweep from forgetting an object a snapshot names, and
-- makes naming fail for one a sweep freed.
CREATE TABLE content_names (
    snapshot_id text NOT NULL,
    key         text NOT NULL REFERENCES content_objects (key) ON DELETE RESTRICT,
    PRIMARY KEY (snapshot_id, key)
);
CREATE INDEX content_names_key ON content_names (key);

-- +goose Down
DROP TABLE content_names;
DROP TABLE content_objects;
