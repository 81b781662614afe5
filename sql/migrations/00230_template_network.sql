-- +goose Up
-- A box template's network setting: on (the default, as before) a box made
-- from it reaches outside networks through its user-mode stack; off, it has
-- only its own loopback. Neither reaches the host's loopback.
ALTER TABLE box_templates ADD COLUMN network boolean NOT NULL DEFAULT true;

-- +goose Down
ALTER TABLE box_templates DROP COLUMN network;
