// Package providers holds the Backend interface that every snapshot backend
// implements, the types it speaks, and nothing else.
//
// The core (app/snapshots) calls backends only through these types; a backend
// never imports the core, the store, the web app or the SDK types of another
// backend. Each backend lives in its own subpackage (providers/local,
// providers/proxmox, providers/docker) with a compile-time check:
//
//	var _ providers.Backend = (*Backend)(nil)
//
// The conformance suite every backend passes is in providers/providertest.
package providers
