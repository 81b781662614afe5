// Package web serves boxsnap's pages: one route table (routes.go), sign-in
// and sessions, and River's dashboard at /jobs behind sign-in.
//
// Each handler lives in the file named for it: its thing first and its verb
// last, a thing's words singular, a page's "show" and a dialog's "Dialog"
// left out. So POST /boxes/{box}/reset is resetBox in box_reset.go, GET
// /boxes/{box}/snapshots/{id}/diff is showSnapshotDiff in snapshot_diff.go,
// and the GET that asks first (showResetDialog) lives beside the POST it
// sends. A route the API has too is handled by a function of the same name
// in a file of the same name there (TestHandlersLiveInFilesNamedForThem).
//
// The pages: the Boxes page with its Machines, Threads, Snapshots and Trash
// tabs (machines.go, threads.go, snapshots_tab.go, trash.go), a box's page
// with its Snapshots card and notices (box_page.go), the dialogs
// (snapshot_*.go, snapshots_bulk.go), each also its own page with a real
// form, and Settings, Snapshots (snapshot_settings.go). What each draws,
// its rows, cards, dialogs and settings rows, package pagemodel builds from
// a reading of the core; the handlers here read the request, call it, and
// render. One handler answers
// a whole page or the fragment an htmx target asks for; a busy card polls
// /boxes/{box}/live about once a second until its operation ends. A dialog
// sends its plan's fingerprint back, and a post whose plan changed meanwhile
// is refused with the new plan shown.
//
// Fork (snapshot_fork.go) opens the new box's page at once, starting: the
// fork's operation polled until it ends, then the box's own page, whose
// facts say where it came from. What each backend offers and the line under
// the tabs come from real plans, one per backend, kind and host, kept a few
// seconds (pagemodel's backend_plans.go and plan_cache.go). Switches in
// Settings save at once; numbers are drafts saved with Save.
//
// Every page and fragment reads through the core as snapshots.Owner(), so
// mayAct decides; every state-changing request is a POST behind the
// standard library's cross-origin protection. A refusal's code becomes a
// page's status in one place (codes.go). It calls the core and auth, and
// asks a backend only through the core, never through Backend.Snap or
// Backend.Boxes (layers_test.go); it must never import jobs or a provider's
// implementation (only its tests do, to run the simulated Proxmox VE behind
// a real core).
package web
