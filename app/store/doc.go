// Package store opens boxsnap's database, migrates it and runs queries in
// transactions. The SQL itself lives in the top-level sql folder; sqlc makes
// each query a typed function of app/store/db, which Store embeds.
//
// It must never import app/web, app/api, jobs or any provider.
package store
