package web

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/take"
)

// TestPostRedirectGet: every form post that succeeds answers a redirect,
// so reloading the page after it posts nothing again; a secret it made
// (a token, a share code) shows once on the page it leads to, and the
// result of a redeem shows there too.
func TestPostRedirectGet(t *testing.T) {
	t.Parallel()
	s := newSite(t, coretest.Options{})
	ctx := context.Background()
	b := s.env.Box(t, snapshots.Owner(), "amber-fox")
	op, sn, err := s.env.Take.Take(ctx, snapshots.Owner(), take.TakeRequest{Box: b.Name, Name: "before the migration"})
	if err != nil {
		t.Fatal(err)
	}
	s.env.Wait(t, op)

	follow := func(what string, w interface {
		Header() http.Header
	}, code int, prefix string) string {
		t.Helper()
		loc := w.Header().Get("Location")
		if code != http.StatusSeeOther || !strings.HasPrefix(loc, prefix) {
			t.Fatalf("%s answered %d %q, not a redirect to %s", what, code, loc, prefix)
		}
		return loc
	}
	// once reads loc as the browser would after the redirect (with the
	// cookies the post set), then again as a reload: what was made shows
	// once.
	once := func(what, loc, shown string, set []*http.Cookie) {
		t.Helper()
		r := httptest.NewRequest("GET", loc, nil)
		r.AddCookie(&http.Cookie{Name: sessionCookie, Value: s.session})
		for _, c := range set {
			r.AddCookie(c)
		}
		got := httptest.NewRecorder()
		s.h.ServeHTTP(got, r)
		if !strings.Contains(got.Body.String(), shown) {
			t.Fatalf("%s: the page after the redirect does not show what was made:\n%s", what, got.Body)
		}
		if page := s.do(t, "GET", loc, nil, nil).Body.String(); strings.Contains(page, shown) {
			t.Fatalf("%s: a reload shows it again", what)
		}
	}

	w := s.do(t, "POST", "/settings/tokens", url.Values{"name": {"ci"}}, nil)
	loc := follow("a new token", w, w.Code, "/settings/tokens?shown=")
	toks, _ := s.env.Auth.ListAPITokens(ctx)
	if len(toks) != 1 {
		t.Fatalf("%d tokens after one post", len(toks))
	}
	once("a new token", loc, `<code class="secret">`, nil)

	w = s.do(t, "POST", "/boxes/threads", url.Values{"title": {"Fix the sign-in flow"}}, nil)
	once("a new thread", follow("a new thread", w, w.Code, "/boxes/threads?shown="), `<code class="secret">`, nil)

	w = s.do(t, "POST", "/boxes/amber-fox/snapshots/"+sn.ID+"/share", url.Values{"days": {"3"}, "back": {"/boxes/amber-fox"}}, nil)
	loc = follow("a share code", w, w.Code, "/boxes/amber-fox/snapshots/"+sn.ID+"/share?")
	shares, _ := s.env.Contents.Shares(ctx, snapshots.Owner(), "")
	if len(shares) != 1 {
		t.Fatalf("%d share codes after one post", len(shares))
	}
	made, err := s.env.Contents.MakeShare(ctx, snapshots.Owner(), "amber-fox", sn.ID, 3)
	if err != nil {
		t.Fatal(err)
	}
	once("a share code", loc, "The share code for", nil)

	w = s.do(t, "POST", "/import/redeem", url.Values{"code": {made.Code}}, nil)
	loc = follow("a redeem", w, w.Code, "/import?box=")
	once("a redeem", loc, `id="import-result"`, w.Result().Cookies())
	list, _ := s.env.Core.List(ctx, snapshots.Owner(), snapshots.ListQuery{})
	n := len(list)
	s.do(t, "GET", loc, nil, nil) // a reload
	if list, _ = s.env.Core.List(ctx, snapshots.Owner(), snapshots.ListQuery{}); len(list) != n {
		t.Fatal("a reload after the redeem redeemed again")
	}
}
