// Package cli is `boxsnap snapshot ...`, the owner's command line (section
// 4, "The CLI"): take, list, delete, restore, fork, rename, note, keep and unkeep,
// as a client of a running server's REST API (app/api) with the owner's
// personal API token. The box log records these as "by a boxsnap command".
//
// The token comes from BOXSNAP_TOKEN or BOXSNAP_TOKEN_FILE and the server
// from --server or BOXSNAP_SERVER (app/config reads both); the token is
// never printed. Human output is in the specification's words; --json on
// list prints the API's own answer. A refusal exits non-zero with its words
// on stderr.
//
// It talks HTTP only: it must never import app/snapshots' service, app/web,
// jobs, a provider, or the database.
package cli
