// Package providers holds the Backend interface that every snapshot backend
// implements, the optional interfaces a backend implements where it can
// (Armer, Straightener, Swapper, HeldCopier, TaskLister, Screener, Browser,
// Exporter, Trasher, and the like), the types they speak, and what every
// backend shares: the errors and their words, the list of secrets a copy of
// a box leaves behind and the scan for the ones it cannot remove, and the
// check of a template folder's name and the unified diff of two texts.
//
// The core (app/snapshots) calls backends only through these types; a backend
// never imports the core, the store, the web app or the SDK types of another
// backend. Each backend lives in its own subpackage (providers/local,
// providers/proxmox, providers/docker, providers/qemu) with a compile-time
// check:
//
//	var _ providers.Backend = (*Backend)(nil)
//
// The conformance suite every backend passes is in providers/providertest;
// providers/pvesim is a simulated Proxmox VE API, for the Proxmox backend's
// tests and the demo. This package must never import app/... or jobs.
package providers
