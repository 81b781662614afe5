package api

import (
	"net/http"
	"strings"
	"time"
)

// longWaits moves the write deadline of a call that waits for its operation
// (a tool, or ?wait=true) past ToolWait; a stream (an export, an import)
// moves its own in its handler. The HTTP server's WriteTimeout bounds every
// other answer.
func longWaits(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, "/tools/") || r.URL.Query().Get("wait") != "" {
			_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(ToolWait + time.Minute))
		}
		next.ServeHTTP(w, r)
	})
}
