package web

import (
	"errors"
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/boxsnap/boxsnap/app/auth"
	"github.com/boxsnap/boxsnap/views"
)

type setupPage struct {
	Page      views.Page
	Token     string
	Usable    bool
	Error     string
	MinLength int
}

// showSetup shows the one-time link's form, while the link can be used.
func (s *Server) showSetup(w http.ResponseWriter, r *http.Request) {
	token := chi.URLParam(r, "token")
	ok, err := s.opts.Auth.SetupLinkUsable(r.Context(), token)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	p := setupPage{Page: views.Page{Title: "Set your password"}, Token: token, Usable: ok, MinLength: auth.MinPasswordLength}
	status := http.StatusOK
	if !ok {
		p.Error = auth.ErrLinkUsed.Error()
		status = http.StatusGone
	}
	s.render(w, r, status, "setup", p)
}

// setup sets the owner's password through the one-time link and signs in.
func (s *Server) setup(w http.ResponseWriter, r *http.Request) {
	token := chi.URLParam(r, "token")
	p := setupPage{Page: views.Page{Title: "Set your password"}, Token: token, Usable: true, MinLength: auth.MinPasswordLength}
	pw := r.PostFormValue("password")
	if pw != r.PostFormValue("confirm") {
		p.Error = "The two passwords are not the same."
		s.render(w, r, http.StatusUnprocessableEntity, "setup", p)
		return
	}
	addr := clientPrefix(r)
	if wait, ok := s.throttle.begin(addr); !ok {
		retryAfter(w, wait)
		p.Error = tooManyWords(wait)
		s.render(w, r, http.StatusTooManyRequests, "setup", p)
		return
	}
	session, err := s.opts.Auth.UseSetupLink(r.Context(), token, pw, r.UserAgent())
	s.throttle.end(addr, !errors.Is(err, auth.ErrLinkUsed))
	switch {
	case errors.Is(err, auth.ErrBusy):
		retryAfter(w, auth.HashWait)
		p.Error = err.Error()
		s.render(w, r, http.StatusTooManyRequests, "setup", p)
		return
	case errors.Is(err, auth.ErrWeakPassword):
		p.Error = err.Error() + "."
		s.render(w, r, http.StatusUnprocessableEntity, "setup", p)
		return
	case errors.Is(err, auth.ErrLinkUsed):
		p.Error, p.Usable = err.Error(), false
		s.render(w, r, http.StatusGone, "setup", p)
		return
	case err != nil:
		s.fail(w, r, err)
		return
	}
	s.setSessionCookie(w, session)
	http.Redirect(w, r, landing, http.StatusSeeOther)
}
