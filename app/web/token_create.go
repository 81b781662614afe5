package web

import (
	"net/http"
)

// createToken makes a personal API token; the page it redirects to shows
// it once.
func (s *Server) createToken(w http.ResponseWriter, r *http.Request) {
	name := r.PostFormValue("name")
	_, token, err := s.opts.Auth.CreateAPIToken(r.Context(), name)
	if err != nil {
		s.tokensPage(r, w, http.StatusUnprocessableEntity, tokensPage{Error: err.Error()})
		return
	}
	http.Redirect(w, r, "/settings/tokens?shown="+s.shown.hold(reveal{Secret: token, Name: name}), http.StatusSeeOther)
}
