-- Box templates (app/snapshots templates.go): the owner's list of what a new
-- box may be made from.

-- name: TemplateList :many
SELECT * FROM box_templates ORDER BY name;

-- name: TemplateByName :one
SELECT * FROM box_templates WHERE name = $1;

-- name: TemplateUpsert :exec
INSERT INTO box_templates (name, backend_id, kind, source, command, run_as, env, memory_bytes, processes, open_files, has_screen, screen_url, network, disk_bytes)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
ON CONFLICT (name) DO UPDATE SET backend_id = EXCLUDED.backend_id, kind = EXCLUDED.kind, source = EXCLUDED.source,
    command = EXCLUDED.command, run_as = EXCLUDED.run_as, env = EXCLUDED.env, memory_bytes = EXCLUDED.memory_bytes,
    processes = EXCLUDED.processes, open_files = EXCLUDED.open_files, has_screen = EXCLUDED.has_screen,
    screen_url = EXCLUDED.screen_url, network = EXCLUDED.network, disk_bytes = EXCLUDED.disk_bytes, updated_at = now();

-- name: TemplateDelete :execrows
DELETE FROM box_templates WHERE name = $1;

-- name: SecurityBoxByGuest :many
SELECT * FROM boxes WHERE backend_id = $1 AND guest_ref = $2 AND state <> 'released';
