-- The titles of the threads a page's rows name, by ID (the pages never read
-- every thread of the install).

-- name: ThreadTitles :many
SELECT id, title FROM threads WHERE id = ANY(@ids::text[]);
