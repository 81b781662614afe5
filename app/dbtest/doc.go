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
// It is for tests only: it must never be imported by non-test code, and it
// must never import any package of boxsnap other than app/pgcluster and
// app/store.
package dbtest
