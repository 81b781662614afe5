// Package s3test starts a real S3 server for the tests, as dockertest
// starts a private dockerd: versitygw (an S3 gateway over a folder, built
// by make test from the module proxy in tools/s3server) on loopback, in a
// temporary folder of its own, with keys of its own, stopped when the test
// ends; over plain HTTP (Start), or over TLS with a certificate signed by a
// CA of the test's own (StartTLS).
//
// Where versitygw is not built, the tests that ask for it skip with the
// reason, except under CI (CI=true), where they fail.
//
// It imports only the standard library, minio-go and objstore; it must
// never import app/..., jobs or another backend, and only tests and the
// benchmarks import it.
package s3test
