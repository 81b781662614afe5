// Package dbtest gives tests a real PostgreSQL database each: one private
// cluster (app/pgcluster, durability off) per test binary, started on the
// first test that asks, a template database migrated once with
// store.Migrate, and per test a fresh database cloned from that template and
// dropped when the test ends.
//
// A package whose tests need the database has:
//
//	func TestMain(m *testing.M) { os.Exit(dbtest.Main(m)) }
//
// and its tests call New (a pool) or NewDSN (a connection string, for a test
// that runs a whole boxsnap process).
//
// To be quick, it copies a stopped seed cluster (os.TempDir()/boxsnap-pgseed,
// made once per machine and user) instead of running initdb, and clones the
// template ahead of the tests that will ask. Test binaries that died without
// stopping their cluster (go test's -timeout) leave it running; the next
// test binary to start a cluster stops and removes those, never touching the
// cluster of a live binary (each holds a flock on its folder).
//
// Its one package-level variable holds the running test binary's cluster,
// set by Main: New(t) has no other way to find it.
//
// It is for tests only: it must never be imported by non-test code, and it
// must never import any package of boxsnap other than app/pgcluster and
// app/store.
package dbtest
