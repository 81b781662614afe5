package web

import (
	"net/http"
	"net/url"
)

// reload ends a post whose change moves rows between the Snapshots card
// and the timeline: the whole page is read again.
func (s *Server) reload(w http.ResponseWriter, r *http.Request, back, flash string) {
	if flash != "" {
		http.SetCookie(w, &http.Cookie{Name: flashCookie, Value: url.QueryEscape(flash), Path: "/", HttpOnly: true,
			Secure: s.opts.SecureCookies, SameSite: http.SameSiteLaxMode, MaxAge: 60})
	}
	if r.Header.Get("HX-Request") == "true" {
		w.Header().Set("HX-Redirect", back)
		w.WriteHeader(http.StatusOK)
		return
	}
	http.Redirect(w, r, back, http.StatusSeeOther)
}
