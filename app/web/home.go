package web

import (
	"net/http"

	"github.com/boxsnap/boxsnap/views"
)

type homePage struct {
	Page    views.Page
	Install string
}

func (s *Server) showHome(w http.ResponseWriter, r *http.Request) {
	s.render(w, r, http.StatusOK, "home", homePage{Page: views.Page{Title: "Boxes", SignedIn: true, Nav: "home"}, Install: s.opts.Install})
}
