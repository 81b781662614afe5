// Package benchbucket starts what the content store's benchmarks (bench/
// bucket, bench/repack) run on, written once: a versitygw on loopback over
// a folder, the ledger in a private PostgreSQL with boxsnap's schema, and
// local backends that ship to that bucket; and it stops them. It must
// never import app/web, app/api, app/cli or jobs: a benchmark measures the
// backend and its store, never the pages.
package benchbucket
