package web

import (
	"errors"
	"net/http"

	"github.com/boxsnap/boxsnap/app/auth"
	"github.com/boxsnap/boxsnap/views"
)

type signInPage struct {
	Page    views.Page
	Error   string
	Next    string
	NoOwner bool
}

func (s *Server) showSignIn(w http.ResponseWriter, r *http.Request) {
	if signedIn(r.Context()) {
		http.Redirect(w, r, safeNext(r.URL.Query().Get("next")), http.StatusSeeOther)
		return
	}
	s.render(w, r, http.StatusOK, "signin", signInPage{Page: views.Page{Title: "Sign in"}, Next: safeNext(r.URL.Query().Get("next"))})
}

func (s *Server) signIn(w http.ResponseWriter, r *http.Request) {
	next := safeNext(r.PostFormValue("next"))
	token, err := s.opts.Auth.SignIn(r.Context(), r.PostFormValue("password"), r.UserAgent())
	switch {
	case errors.Is(err, auth.ErrWrongPassword), errors.Is(err, auth.ErrNoOwner):
		s.logger(r).Warn("sign-in refused", "why", err.Error())
		s.render(w, r, http.StatusUnauthorized, "signin", signInPage{Page: views.Page{Title: "Sign in"},
			Error: err.Error(), Next: next, NoOwner: errors.Is(err, auth.ErrNoOwner)})
		return
	case err != nil:
		s.fail(w, r, err)
		return
	}
	s.setSessionCookie(w, token)
	http.Redirect(w, r, next, http.StatusSeeOther)
}
