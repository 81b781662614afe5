package web

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/views"
)

// site is the web app on a running core, with the owner signed in.
type site struct {
	env     *coretest.Env
	h       http.Handler
	session string
}

func newSite(t testing.TB, opts coretest.Options) *site {
	t.Helper()
	return siteOn(t, coretest.New(t, opts))
}

// siteOn is the web app on env's core, with the owner signed in.
func siteOn(t testing.TB, env *coretest.Env) *site {
	t.Helper()
	ctx := context.Background()
	if _, err := env.Auth.Bootstrap(ctx, "a long enough password"); err != nil {
		t.Fatal(err)
	}
	session, err := env.Auth.SignIn(ctx, "a long enough password", "test")
	if err != nil {
		t.Fatal(err)
	}
	vw, err := views.New()
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(optionsOn(env, vw))
	if err != nil {
		t.Fatal(err)
	}
	srv.slowFor = 0 // throttled answers at once in tests
	return &site{env: env, h: srv.Handler(), session: session}
}

// do sends a request as the signed-in owner, from this site.
func (s *site) do(t testing.TB, method, target string, form url.Values, header map[string]string) *httptest.ResponseRecorder {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	r := httptest.NewRequest(method, target, body)
	if form != nil {
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	r.Header.Set("Sec-Fetch-Site", "same-origin")
	r.AddCookie(&http.Cookie{Name: sessionCookie, Value: s.session})
	for k, v := range header {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	s.h.ServeHTTP(w, r)
	return w
}
