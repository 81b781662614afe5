// Package providertest is the conformance suite of the provider contract that
// every backend passes: Snapshotting with no I/O, a plan then a take, labels
// that round-trip through HeldSnapshots, a restore in the plan's order that
// brings back exactly the state, a delete that HeldSnapshots then lacks and
// that succeeds twice, and a fork that is a distinct guest. A backend's own
// tests call Run with a Harness. BrokenArchives gives the ways an archive
// breaks on its way to an import (cut short, a byte flipped, bytes after its
// end), for each backend's import tests, and RefusedInWords checks their
// refusals.
//
// It imports providers and the standard library's testing only; it must never
// import a backend, the core or the app.
package providertest
