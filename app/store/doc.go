// Package store opens boxsnap's database, migrates it and runs queries in
// transactions. The SQL itself lives in the top-level sql folder.
//
// It must never import app/web, app/api, jobs or any provider.
package store
