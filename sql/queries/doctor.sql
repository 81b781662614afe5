-- The doctor's reads (app/boot doctor.go); they change nothing.

-- name: DoctorServerVersion :one
SELECT current_setting('server_version')::text;

-- name: DoctorInstallID :one
-- The install's ID once serve has made it; the doctor never makes it.
SELECT install_id FROM install;
