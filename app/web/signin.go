package web

import (
	"errors"
	"net/http"
	"time"

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
	addr := clientPrefix(r)
	if wait, ok := s.throttle.begin(addr); !ok {
		s.tooMany(w, r, wait, next)
		return
	}
	token, err := s.opts.Auth.SignIn(r.Context(), r.PostFormValue("password"), r.UserAgent())
	s.throttle.end(addr, err == nil || errors.Is(err, auth.ErrBusy))
	switch {
	case errors.Is(err, auth.ErrBusy):
		s.tooMany(w, r, auth.HashWait, next)
		return
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

// tooMany answers a throttled sign-in: 429, with when to try again.
func (s *Server) tooMany(w http.ResponseWriter, r *http.Request, wait time.Duration, next string) {
	s.logger(r).Warn("sign-in throttled", "wait", wait.Round(time.Second))
	// A client that ignores Retry-After gets its answer a moment later, so a
	// flood costs the server a few requests a second, not thousands; the
	// number of answers held back at once is bounded.
	select {
	case s.slowed <- struct{}{}:
		t := time.NewTimer(min(wait, s.slowFor))
		select {
		case <-t.C:
		case <-r.Context().Done():
		}
		t.Stop()
		<-s.slowed
	default:
	}
	retryAfter(w, wait)
	s.render(w, r, http.StatusTooManyRequests, "signin", signInPage{Page: views.Page{Title: "Sign in"},
		Error: tooManyWords(wait), Next: next})
}
