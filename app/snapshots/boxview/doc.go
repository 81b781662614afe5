// Package boxview is a box's page's read model: BoxView reads everything
// the page shows of a box at one moment (its records in one read-only,
// repeatable-read transaction, then its backend's answers once), and
// AutomaticNowByBackend counts how each backend's boxes stand for the
// automatic history, for Settings. The pages alone call it.
//
// Views is a struct with the fields it uses of its own (the store, the
// operations' engine, the logger); what it needs of the kernel (a box,
// its records, the settings, the backends) it reaches through the kernel
// interface it declares, which the core's *snapshots.Service is, given to
// New in app/snapshots/seams.
//
// It must never import app/web, app/api, app/cli, jobs, a provider's
// subpackage, nor another seam of the core (a package under
// app/snapshots/).
package boxview
