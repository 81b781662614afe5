package web

import (
	"context"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/web/pagemodel"
	"github.com/boxsnap/boxsnap/views"
)

// signInServer is the web app with an owner whose password is known, and
// its throttle on a clock the test moves.
func signInServer(t *testing.T) (*Server, *coretest.Env, *time.Time) {
	t.Helper()
	env := coretest.New(t, coretest.Options{NoWorkers: true})
	if _, err := env.Auth.Bootstrap(context.Background(), "a long enough password"); err != nil {
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
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	srv.throttle.now = func() time.Time { return now }
	srv.slowFor = 0
	return srv, env, &now
}

// post sends a form from addr, as a browser on this site would.
func post(h http.Handler, target, addr string, form url.Values) *httptest.ResponseRecorder {
	r := httptest.NewRequest("POST", target, strings.NewReader(form.Encode()))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r.Header.Set("Sec-Fetch-Site", "same-origin")
	r.RemoteAddr = addr
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// TestSignInThrottled: after FreeWrongPasswords wrong passwords from one
// address, the next sign-in from it is refused with 429, Retry-After and
// when to try again, without checking the password, even a right one; a
// right password from another address still gets in; once the wait is
// over the address may try again.
func TestSignInThrottled(t *testing.T) {
	t.Parallel()
	srv, _, now := signInServer(t)
	h := srv.Handler()
	const guesser, owner = "192.0.2.1:40000", "198.51.100.7:50000"
	for i := range FreeWrongPasswords {
		w := post(h, "/signin", guesser, url.Values{"password": {fmt.Sprintf("guess number %d", i)}})
		if w.Code != http.StatusUnauthorized || !strings.Contains(w.Body.String(), "That password is not right.") {
			t.Fatalf("wrong password %d answered %d", i+1, w.Code)
		}
	}
	// Another port of the same address is the same address.
	w := post(h, "/signin", "192.0.2.1:40001", url.Values{"password": {"a long enough password"}})
	if w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") != "1" ||
		!strings.Contains(w.Body.String(), "Too many sign-ins from your address: try again in 1 second.") {
		t.Fatalf("after %d wrong passwords: %d, Retry-After %q\n%s", FreeWrongPasswords, w.Code, w.Header().Get("Retry-After"), w.Body)
	}
	if c := w.Result().Cookies(); len(c) != 0 {
		t.Fatalf("a throttled sign-in set cookies: %v", c)
	}
	w = post(h, "/signin", owner, url.Values{"password": {"a long enough password"}, "next": {"/boxes"}})
	if w.Code != http.StatusSeeOther || w.Header().Get("Location") != "/boxes" || len(w.Result().Cookies()) != 1 {
		t.Fatalf("the right password from another address: %d %s", w.Code, w.Header().Get("Location"))
	}
	// The wait doubles with each further wrong password.
	*now = now.Add(time.Second)
	if w := post(h, "/signin", guesser, url.Values{"password": {"one more guess"}}); w.Code != http.StatusUnauthorized {
		t.Fatalf("after the wait: %d", w.Code)
	}
	w = post(h, "/signin", guesser, url.Values{"password": {"a long enough password"}})
	if w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") != "2" {
		t.Fatalf("after the next wrong password: %d, Retry-After %q", w.Code, w.Header().Get("Retry-After"))
	}
	// The set-up link is throttled the same way.
	w = post(h, "/setup/made-up", guesser, url.Values{"password": {"a long enough password"}, "confirm": {"a long enough password"}})
	if w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") == "" {
		t.Fatalf("the set-up link from a throttled address: %d", w.Code)
	}
	*now = now.Add(2 * time.Second)
	w = post(h, "/signin", guesser, url.Values{"password": {"a long enough password"}})
	if w.Code != http.StatusSeeOther {
		t.Fatalf("the right password once the wait is over: %d", w.Code)
	}
}

// TestSignInOneAtATimePerAddress: while one sign-in from an address is
// being checked, another from it is refused at once (16 concurrent wrong
// passwords cost one password hash at a time, not 16).
func TestSignInOneAtATimePerAddress(t *testing.T) {
	th := newSignInThrottle(nil)
	a := clientPrefix(&http.Request{RemoteAddr: "[2001:db8::1]:443"})
	b := clientPrefix(&http.Request{RemoteAddr: "[2001:db8::2]:443"})
	if a != b {
		t.Fatalf("one IPv6 /64 counts as one address: %v, %v", a, b)
	}
	if _, ok := th.begin(a); !ok {
		t.Fatal("the first sign-in was refused")
	}
	if wait, ok := th.begin(b); ok || wait <= 0 {
		t.Fatal("a second sign-in from the same address ran beside the first")
	}
	if _, ok := th.begin(clientPrefix(&http.Request{RemoteAddr: "203.0.113.9:1"})); !ok {
		t.Fatal("another address waited for the first")
	}
	th.end(a, false)
	if _, ok := th.begin(a); !ok {
		t.Fatal("the address may sign in again once the first ended")
	}
}

// TestNextStaysOnSite: after sign-in, next leads only to a path on this
// site, whatever a link put in it.
func TestNextStaysOnSite(t *testing.T) {
	t.Parallel()
	srv, _, _ := signInServer(t)
	h := srv.Handler()
	for _, bad := range []string{
		"//evil.example", "/\\evil.example", "/\t/evil.example", "/\n/evil.example", "\\\\evil.example",
		"https://evil.example/", "http:evil.example", "javascript:alert(1)", "evil.example", " /boxes",
		"/\u202e/evil.example", "/ /evil.example", "///evil.example", "/\\/evil.example",
	} {
		if got := pagemodel.SafeNext(bad); got != "/" {
			t.Errorf("safeNext(%q) = %q, want /", bad, got)
		}
	}
	for _, good := range []string{"/", "/boxes", "/boxes/amber-fox?tab=snapshots", "/settings/snapshots#ceilings", "/boxes/a%2Fb"} {
		if got := pagemodel.SafeNext(good); got != good {
			t.Errorf("safeNext(%q) = %q, want it kept", good, got)
		}
	}
	// Through the sign-in itself, as a link would send them: the query is
	// decoded first, so %09 is a tab and %5c a backslash.
	for i, raw := range []string{"/%09/evil.example", "/%5cevil.example", "%2F%2Fevil.example", "https%3A%2F%2Fevil.example", "/%0d%0aSet-Cookie:x=1"} {
		next, _ := url.QueryUnescape(raw)
		w := post(h, "/signin?next="+raw, fmt.Sprintf("192.0.2.%d:1", i+1), url.Values{"password": {"a long enough password"}, "next": {next}})
		if w.Code != http.StatusSeeOther || w.Header().Get("Location") != "/" {
			t.Errorf("sign-in with next=%s: %d, Location %q", raw, w.Code, w.Header().Get("Location"))
		}
		r := httptest.NewRequest("GET", "/signin?next="+raw, nil)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		if strings.Contains(rec.Body.String(), "evil.example") && !strings.Contains(rec.Body.String(), `value="/"`) {
			t.Errorf("the sign-in page carries next=%s on", raw)
		}
	}
}

// TestFormsLeaveNoTempFiles: a multipart post of a 40 MB file to the
// sign-in and set-up forms is refused (413) after at most MaxFormBytes, and
// leaves no temporary file behind.
func TestFormsLeaveNoTempFiles(t *testing.T) {
	srv, _, _ := signInServer(t)
	h := srv.Handler()
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	for i, target := range []string{"/signin", "/setup/made-up-token"} {
		pr, pw := io.Pipe()
		mw := multipart.NewWriter(pw)
		go func() {
			_ = mw.WriteField("password", "a long enough password")
			f, _ := mw.CreateFormFile("upload", "big.bin")
			chunk := make([]byte, 1<<20)
			for range 40 {
				if _, err := f.Write(chunk); err != nil {
					pw.CloseWithError(err)
					return
				}
			}
			pw.CloseWithError(mw.Close())
		}()
		r := httptest.NewRequest("POST", target, pr)
		r.Header.Set("Content-Type", mw.FormDataContentType())
		r.Header.Set("Sec-Fetch-Site", "same-origin")
		r.RemoteAddr = fmt.Sprintf("192.0.2.%d:1", i+1)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		_ = pr.CloseWithError(io.ErrClosedPipe)
		if w.Code != http.StatusRequestEntityTooLarge {
			t.Errorf("a 40 MB form to %s answered %d, want 413", target, w.Code)
		}
		left, _ := filepath.Glob(filepath.Join(tmp, "multipart-*"))
		if len(left) > 0 {
			t.Fatalf("a form to %s left %d temporary files: %v", target, len(left), left)
		}
	}
	// A small multipart form still signs in.
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() {
		_ = mw.WriteField("password", "a long enough password")
		f, _ := mw.CreateFormFile("upload", "small.txt")
		_, _ = f.Write([]byte("hello"))
		pw.CloseWithError(mw.Close())
	}()
	r := httptest.NewRequest("POST", "/signin", pr)
	r.Header.Set("Content-Type", mw.FormDataContentType())
	r.Header.Set("Sec-Fetch-Site", "same-origin")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != http.StatusSeeOther {
		t.Fatalf("a small multipart sign-in: %d", w.Code)
	}
	if left, _ := os.ReadDir(tmp); len(left) > 0 {
		t.Fatalf("a small multipart form left %d files", len(left))
	}
}

// fuzzValues are the seeds of FuzzWebForms: the inputs that once gave 500s
// (a NUL, invalid UTF-8, NaN and infinities), overrides, paths, and real
// names so that handlers reach the core.
var fuzzValues = []string{
	"", "x\x00y", "\x00", "\xff\xfe", "NaN", "nan", "Inf", "-Inf", "+Inf", "1e309", "-1", "0", "99999999999999999999",
	"\u202etxt.exe", "a\tb", "amber-fox", "../../etc/passwd", "/etc/ssh", "%00", "sn000000000000", "op000000000000",
	strings.Repeat("é", 300), "$5", "'; DROP TABLE boxes; --", "on",
}

// formFields are the fields boxsnap's forms send; each fuzzed post sets all.
var formFields = []string{
	"name", "title", "note", "password", "confirm", "next", "template", "command", "adopt", "backend", "kind", "thread",
	"host", "perBox", "roomPercent", "keepDays", "ceiling-local", "agentsMayRestore", "pictures", "plan", "undo",
	"back", "replace", "memory", "snapshot", "ids", "action", "source", "user", "env", "memoryBytes", "processes", "openFiles",
}

// FuzzWebForms: no form and no path parameter of the web app answers a 5xx
// or shows SQL, whatever it holds. `go test` runs the seeds; `go test
// -fuzz FuzzWebForms ./app/web` explores further.
func FuzzWebForms(f *testing.F) {
	for _, v := range fuzzValues {
		f.Add(v)
	}
	s := newSite(f, coretest.Options{NoWorkers: true})
	s.env.Box(f, snapshots.Owner(), "amber-fox")
	srv, err := New(optionsOn(s.env, mustViews(f)))
	if err != nil {
		f.Fatal(err)
	}
	srv.slowFor = 0
	type route struct{ method, pattern string }
	var routes []route
	_ = chi.Walk(srv.router(), func(method, pattern string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		// /events streams until its client goes; its one input, box, is
		// refused in TestEventsSayWhichBoxChanged.
		if pattern == "/signout" || pattern == "/events" || strings.HasPrefix(pattern, "/jobs") || strings.HasPrefix(pattern, "/static") || strings.HasPrefix(pattern, "/api") {
			return nil
		}
		routes = append(routes, route{method, pattern})
		return nil
	})
	if len(routes) < 20 {
		f.Fatalf("walked only %d routes", len(routes))
	}
	f.Fuzz(func(t *testing.T, v string) {
		for _, rt := range routes {
			path := rt.pattern
			for strings.Contains(path, "{") {
				i, j := strings.Index(path, "{"), strings.Index(path, "}")
				path = path[:i] + url.PathEscape(v) + path[j+1:]
			}
			if path == "" {
				path = "/"
			}
			form := url.Values{}
			for _, k := range formFields {
				form.Set(k, v)
			}
			var w *httptest.ResponseRecorder
			if rt.method == "GET" {
				w = s.do(t, "GET", path+"?next="+url.QueryEscape(v)+"&from="+url.QueryEscape(v)+"&q="+url.QueryEscape(v), nil, nil)
			} else {
				w = s.do(t, rt.method, path, form, nil)
			}
			if w.Code >= 500 || strings.Contains(w.Body.String(), "SQLSTATE") {
				t.Fatalf("%s %s with %q answered %d:\n%.400s", rt.method, rt.pattern, v, w.Code, w.Body)
			}
		}
	})
}

func mustViews(t testing.TB) *views.Views {
	vw, err := views.New()
	if err != nil {
		t.Fatal(err)
	}
	return vw
}

// TestBoxTemplatesOnTheSettingsPage: the owner adds, sees and removes box
// templates on Settings; a folder outside the templates folder is refused in
// words and saves nothing.
func TestBoxTemplatesOnTheSettingsPage(t *testing.T) {
	t.Parallel()
	s := newSite(t, coretest.Options{NoWorkers: true})
	if w := s.do(t, "GET", "/settings/templates", nil, nil); w.Code != 200 || !strings.Contains(w.Body.String(), "No box templates yet: agents cannot make boxes.") {
		t.Fatalf("the empty page: %d", w.Code)
	}
	w := s.do(t, "POST", "/settings/templates", url.Values{"name": {"etc-copy"}, "backend": {"local"}, "kind": {"linux"}, "source": {"/etc/ssh"}}, nil)
	if w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), "A box template&#39;s folder is a name inside the templates folder, not a full path.") {
		t.Fatalf("a full path: %d\n%s", w.Code, w.Body)
	}
	w = s.do(t, "POST", "/settings/templates", url.Values{"name": {"node-dev"}, "backend": {"local"}, "kind": {"linux"},
		"command": {"npm start"}, "env": {"PORT=3000\nNODE_ENV=development"}, "memoryMiB": {"512"}, "processes": {"64"}, "diskMiB": {"32"}}, nil)
	if w.Code != http.StatusSeeOther {
		t.Fatalf("a good template: %d\n%s", w.Code, w.Body)
	}
	got, err := s.env.Boxes.Template(context.Background(), "node-dev")
	if err != nil || got.Limits.MemoryBytes != 512<<20 || got.Limits.Processes != 64 || got.Limits.DiskBytes != 32<<20 || got.Env["PORT"] != "3000" || got.Command != "npm start" {
		t.Fatalf("saved: %+v %v", got, err)
	}
	if w := s.do(t, "GET", "/settings/templates", nil, nil); !strings.Contains(w.Body.String(), "npm start") {
		t.Fatal("the page does not list the template")
	}
	if w := s.do(t, "POST", "/settings/templates/node-dev/delete", url.Values{}, nil); w.Code != http.StatusSeeOther {
		t.Fatalf("remove: %d", w.Code)
	}
	if _, err := s.env.Boxes.Template(context.Background(), "node-dev"); err == nil {
		t.Fatal("the template is still there")
	}
}
