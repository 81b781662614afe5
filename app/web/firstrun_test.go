package web

import (
	"context"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/views"
)

// TestFirstRunGuides: before a password exists, / says the owner's
// password is set through the link boxsnap printed at start and how to
// print a new one, with no sign-in form to try; the set-up form says the
// password's rules in words; after set-up and after sign-in the person
// lands on the Snapshots tab; every box on Machines says its state in a
// word beside its colour.
func TestFirstRunGuides(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := coretest.New(t, coretest.Options{NoWorkers: true})
	vw, err := views.New()
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(optionsOn(env, vw))
	if err != nil {
		t.Fatal(err)
	}
	srv.slowFor = 0
	h := srv.Handler()
	get := func(path, session string) *httptest.ResponseRecorder {
		r := httptest.NewRequest("GET", path, nil)
		if session != "" {
			r.AddCookie(&http.Cookie{Name: sessionCookie, Value: session})
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	follow := func(w *httptest.ResponseRecorder) *httptest.ResponseRecorder {
		for i := 0; i < 5 && w.Code == http.StatusSeeOther; i++ {
			w = get(w.Header().Get("Location"), "")
		}
		return w
	}

	first := follow(get("/", ""))
	body := html.UnescapeString(first.Body.String())
	for _, want := range []string{"Set the owner's password", "one-time link", "/setup/", "start <code>boxsnap serve</code> again: each start prints a new link", "BOXSNAP_PASSWORD"} {
		if !strings.Contains(body, want) {
			t.Errorf("before a password exists, / does not say %q:\n%s", want, body)
		}
	}
	if strings.Contains(body, `type="password"`) {
		t.Error("before a password exists, / offers a sign-in form to try")
	}
	// A sign-in tried anyway says it once.
	w := post(h, "/signin", "192.0.2.1:1", url.Values{"password": {"a guess at it"}})
	if n := strings.Count(html.UnescapeString(w.Body.String()), "one-time link"); n != 1 {
		t.Errorf("a sign-in before a password exists says to use the link %d times", n)
	}

	// The set-up form says its rules, and lands on the Snapshots tab.
	token, err := env.Auth.Bootstrap(ctx, "")
	if err != nil || token == "" {
		t.Fatalf("no set-up link: %v", err)
	}
	setup := html.UnescapeString(get("/setup/"+token, "").Body.String())
	if !strings.Contains(setup, `aria-describedby="password-rules"`) || !strings.Contains(setup, "At least 10 characters.") {
		t.Errorf("the set-up form does not say the password's rules:\n%s", setup)
	}
	w = post(h, "/setup/"+token, "192.0.2.1:1", url.Values{"password": {"a long enough password"}, "confirm": {"a long enough password"}})
	if w.Code != http.StatusSeeOther || w.Header().Get("Location") != "/boxes/snapshots" {
		t.Errorf("set-up answered %d %q, not the Snapshots tab", w.Code, w.Header().Get("Location"))
	}
	w = post(h, "/signin", "192.0.2.1:1", url.Values{"password": {"a long enough password"}})
	var session string
	for _, c := range w.Result().Cookies() {
		if c.Name == sessionCookie {
			session = c.Value
		}
	}
	if session == "" {
		t.Fatalf("sign-in answered %d with no session", w.Code)
	}
	for w.Code == http.StatusSeeOther {
		loc := w.Header().Get("Location")
		w = get(loc, session)
		if w.Code == http.StatusOK && loc != "/boxes/snapshots" {
			t.Errorf("after sign-in the person lands on %s, not the Snapshots tab", loc)
		}
	}

	// Machines: each box says running or stopped in a word.
	if _, err := env.Boxes.AcquireBox(ctx, snapshots.Owner(), snapshots.BoxRequest{Name: "amber-fox", Backend: "local", Command: "while :; do sleep 1; done"}); err != nil {
		t.Fatal(err)
	}
	env.Box(t, snapshots.Owner(), "brisk-lake")
	machines := get("/boxes", session).Body.String()
	for box, want := range map[string]string{"amber-fox": "Running", "brisk-lake": "Stopped"} {
		i := strings.Index(machines, ">"+box+"</a>")
		if i < 0 {
			t.Fatalf("Machines has no %s", box)
		}
		card := machines[i:]
		card = card[:strings.Index(card, "</li>")]
		look := map[string]string{"Running": "is-running", "Stopped": "is-stopped"}[want]
		if !strings.Contains(card, `<span class="state `+look+`">`) || !strings.Contains(card, `</svg>`+want+`</span>`) {
			t.Errorf("%s's card does not say %s beside its colour:\n%s", box, want, card)
		}
	}
}

// TestStartOnEveryStoppedBox: every stopped box has Start on its card and
// on its page; Start runs it and says so; a running box has none.
func TestStartOnEveryStoppedBox(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newSite(t, coretest.Options{NoWorkers: true})
	b, err := s.env.Boxes.AcquireBox(ctx, snapshots.Owner(), snapshots.BoxRequest{Name: "amber-fox", Backend: "local", Command: "while :; do sleep 1; done"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.env.Boxes.AcquireBox(ctx, snapshots.Owner(), snapshots.BoxRequest{Name: "brisk-lake", Backend: "local", Command: "while :; do sleep 1; done"}); err != nil {
		t.Fatal(err)
	}
	if err := s.env.Local.Stop(ctx, providers.Guest{Backend: b.BackendID, Kind: b.Kind, Host: b.Host, Ref: b.GuestRef, Generation: b.Generation}); err != nil {
		t.Fatal(err)
	}
	page := s.do(t, "GET", "/boxes", nil, nil).Body.String()
	if !strings.Contains(page, `action="/boxes/amber-fox/start"`) {
		t.Fatal("the stopped box's card has no Start")
	}
	if strings.Contains(page, `action="/boxes/brisk-lake/start"`) {
		t.Fatal("the running box's card has Start")
	}
	// The box's own page offers it too, and only there where it is stopped.
	if page := s.do(t, "GET", "/boxes/amber-fox", nil, nil).Body.String(); !strings.Contains(page, `action="/boxes/amber-fox/start"`) {
		t.Fatal("the stopped box's page has no Start")
	}
	if page := s.do(t, "GET", "/boxes/brisk-lake", nil, nil).Body.String(); strings.Contains(page, `action="/boxes/brisk-lake/start"`) {
		t.Fatal("the running box's page has Start")
	}
	w := s.do(t, "POST", "/boxes/amber-fox/start", url.Values{}, nil)
	if w.Code != http.StatusSeeOther {
		t.Fatalf("Start answered %d:\n%s", w.Code, w.Body)
	}
	st, err := s.env.Boxes.BoxStatus(ctx, snapshots.Owner(), "amber-fox")
	if err != nil || !st.Running {
		t.Fatalf("after Start amber-fox runs %v (%v)", st.Running, err)
	}
	// Start again refuses in words, and changes nothing.
	w = s.do(t, "POST", "/boxes/amber-fox/start", url.Values{}, nil)
	if w.Code != http.StatusConflict || !strings.Contains(w.Body.String(), "amber-fox is running already.") {
		t.Fatalf("a second Start answered %d:\n%s", w.Code, w.Body)
	}
}
