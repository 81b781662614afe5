// Package wire holds the JSON of boxsnap's REST API under /api/v1: the
// bodies its routes read (requests.go) and the answers they give
// (answers.go), and the agent tools' answers (tools.go), as Go types with
// their JSON names. The API (app/api)
// decodes its requests into these types and encodes its answers from them;
// the CLI (app/cli) sends and reads the same types, so the two cannot
// drift apart. The OpenAPI file the API serves (app/api/openapi.json)
// documents the same names.
//
// It holds types only, no behaviour: its answers carry the core's records
// (app/snapshots) and the providers' file entries as they are. It must never
// import app/api, app/cli, app/web, app/store, jobs or a provider's
// subpackage, nor net/http.
package wire
