// Package cli is the owner's command line, `boxsnap snapshot ...` and
// `boxsnap box ...`, a client of a running server's REST API (app/api) with
// the owner's personal API token. The box log records what it does as "by a
// boxsnap command".
//
// The commands of `boxsnap snapshot` (cli.go's table):
//
//	take list delete restore fork keep renew unkeep save unsave history
//	delete-history rename note export import share shares unshare redeem
//	files download diff approvals approve decline forget templates template
//	template-remove head
//
// and of `boxsnap box` (box.go's table):
//
//	release trash trash-restore trash-empty reset undo move hosts host-gone
//	takeover
//
// The token comes from BOXSNAP_TOKEN or BOXSNAP_TOKEN_FILE and the server
// from --server or BOXSNAP_SERVER (app/config reads both); the token is never
// printed. Human output is in the core's words; --json on list, files and
// diff prints the API's JSON. A refusal exits non-zero with its words on
// stderr.
//
// It talks to boxsnap over HTTP only: it sends and reads the API's own
// request and answer types (app/wire), and takes from the core
// (app/snapshots) its words (words.go) and its record types, never calling
// its service. It must never import app/api, app/auth, app/web, jobs,
// providers or a provider, or the store (app/store, app/store/db).
package cli
