package api

import (
	_ "embed"
	"net/http"
)

// openAPI is the OpenAPI 3 document of every route in routes.go; a test
// keeps the two the same.
//
//go:embed openapi.json
var openAPI []byte

// serveOpenAPI answers the OpenAPI document; it needs no token.
func serveOpenAPI(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(openAPI)
}
