package web

import (
	"net/http"

	"github.com/boxsnap/boxsnap/static"
	"github.com/boxsnap/boxsnap/views"
)

// notFound answers a path boxsnap does not have with its own page, in the
// layout, with a way home.
func (s *Server) notFound(w http.ResponseWriter, r *http.Request) {
	in := signedIn(r.Context())
	s.render(w, r, http.StatusNotFound, "error", errorPage{Page: views.Page{Title: notFoundTitle, SignedIn: in},
		Title: notFoundTitle, Message: "boxsnap has no page at " + r.URL.Path + ". It may have moved, or the link may be mistyped."})
}

const notFoundTitle = "No such page"

// favicon answers /favicon.ico, which browsers ask for on their own, with
// the SVG the layout links.
func favicon(w http.ResponseWriter, r *http.Request) {
	b, err := static.Files.ReadFile("favicon.svg")
	if err != nil {
		http.Error(w, "no icon", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "image/svg+xml")
	w.Header().Set("Cache-Control", "public, max-age=86400")
	_, _ = w.Write(b)
}
