// Package sql holds boxsnap's SQL: the migrations of its own tables, applied
// in order by goose, and the queries (queries/*.sql), each made a typed Go
// function of app/store/db by sqlc (sqlc.yaml; make sqlc); outside/ declares
// River's table, as far as the queries read it, for sqlc's checks only. It
// holds files only; it must never import another package of boxsnap.
package sql

import "embed"

// Migrations holds the app's migrations, numbered in goose's format
// (migrations/00001_ground.sql ...). River's own tables are migrated by
// River's migrator, not from here.
//
//go:embed migrations/*.sql
var Migrations embed.FS
