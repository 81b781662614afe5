package web

import (
	"errors"
	"net/http"
	"time"

	"github.com/boxsnap/boxsnap/app/auth"
	"github.com/boxsnap/boxsnap/app/web/pagemodel"
	"github.com/boxsnap/boxsnap/views"
)

// firstRunTitle heads the sign-in page before the owner's password is set.
const firstRunTitle = "Set the owner's password"

// landing is where a person lands after setting the password, signing in
// or opening /: the Snapshots tab.
const landing = "/boxes/snapshots"

// showLanding answers / with the landing.
func showLanding(w http.ResponseWriter, r *http.Request) {
	http.Redirect(w, r, landing, http.StatusSeeOther)
}

type signInPage struct {
	Page    views.Page
	Error   string
	Next    string
	NoOwner bool
}

func (s *Server) showSignIn(w http.ResponseWriter, r *http.Request) {
	if signedIn(r.Context()) {
		http.Redirect(w, r, pagemodel.SafeNext(r.URL.Query().Get("next")), http.StatusSeeOther)
		return
	}
	p := signInPage{Page: views.Page{Title: "Sign in"}, Next: pagemodel.SafeNext(r.URL.Query().Get("next"))}
	if ok, err := s.opts.Auth.OwnerExists(r.Context()); err == nil && !ok {
		// The first run: no password to type yet, so no form; the page says
		// how to set one.
		p.Page.Title, p.NoOwner = firstRunTitle, true
	}
	s.render(w, r, http.StatusOK, "signin", p)
}

func (s *Server) signIn(w http.ResponseWriter, r *http.Request) {
	next := pagemodel.SafeNext(r.PostFormValue("next"))
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
	case errors.Is(err, auth.ErrNoOwner):
		s.logger(r).Warn("sign-in refused", "why", err.Error())
		s.render(w, r, http.StatusUnauthorized, "signin", signInPage{Page: views.Page{Title: firstRunTitle}, Next: next, NoOwner: true})
		return
	case errors.Is(err, auth.ErrWrongPassword):
		s.logger(r).Warn("sign-in refused", "why", err.Error())
		s.render(w, r, http.StatusUnauthorized, "signin", signInPage{Page: views.Page{Title: "Sign in"}, Error: err.Error(), Next: next})
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
