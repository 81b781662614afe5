package api_test

import (
	"archive/tar"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/providers"
)

// plant writes files (content), links (target "->") and hard links
// ("=>" to a path) into dir.
func plant(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	// Files first, then links to them.
	for pass := 0; pass < 2; pass++ {
		for rel, data := range files {
			p := filepath.Join(dir, filepath.FromSlash(rel))
			link := strings.HasPrefix(data, "->") || strings.HasPrefix(data, "=>")
			if link != (pass == 1) {
				continue
			}
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			var err error
			switch {
			case strings.HasPrefix(data, "->"):
				err = os.Symlink(data[2:], p)
			case strings.HasPrefix(data, "=>"):
				err = os.Link(filepath.Join(dir, filepath.FromSlash(data[2:])), p)
			default:
				err = os.WriteFile(p, []byte(data), 0o600)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
	}
}

// Credential values, each of its shape, none in any real use.
const (
	keyLine   = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZWQyNTUx"
	awsID     = "AKIAIOSFODNN7EXAMPLE"
	awsSecret = "wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY12"
	ghp       = "ghp_0123456789abcdefghijABCDEFGHIJ012345"
	gho       = "gho_0123456789abcdefghijABCDEFGHIJ012345"
	ghPAT     = "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123456789"
	antKey    = "sk-ant-api03-0123456789abcdefghijklmnopqrstuvwxyz-ABCDEF"
	openAIKey = "sk-proj-0123456789abcdefghijklmnopqrstuvwxyzABCD"
	netrcPass = "n3trcPassw0rdValue"
	gitCred   = "gitCredT0ken0123456789"
)

// TestShareScrubFollowsLinksAndValues plants each shape of credential a share
// must leave out: a home that is a link, a .ssh that is a link, a hard link to
// a key, an .env with AWS keys, a .git-credentials and a .netrc outside a
// home. The share copy leaves each out, and the redeemed box holds none of
// their values. Then the ordinary files that hold the well-known shapes (a
// private key header, AWS, GitHub ghp_, gho_ and github_pat_, Anthropic and
// OpenAI tokens) and a removed file's value: the share is Blocked, naming
// each file, and no code is made.
func TestShareScrubFollowsLinksAndValues(t *testing.T) {
	t.Parallel()
	a := setup(t)
	box := a.Box(t, snapshots.Owner(), "amber-fox")
	dir := a.Local.BoxDir(providers.Guest{Ref: box.GuestRef})
	plant(t, dir, map[string]string{
		"app/main.go":                   "package main",
		"data/alice/.ssh/id_ed25519":    "-----BEGIN OPENSSH PRIVATE KEY-----\n" + keyLine + "\n-----END OPENSSH PRIVATE KEY-----\n",
		"data/alice/notes.md":           "alice's notes",
		"home/alice":                    "->../data/alice",
		"keys/bob/id_rsa":               "-----BEGIN RSA PRIVATE KEY-----\nMIIEbobsKeyLine0123456789abcdef\n-----END RSA PRIVATE KEY-----\n",
		"home/bob/.ssh":                 "->../../keys/bob",
		"home/bob/work.txt":             "bob's work",
		"app/backup.key":                "=>keys/bob/id_rsa",
		"app/.env":                      "AWS_ACCESS_KEY_ID=" + awsID + "\nAWS_SECRET_ACCESS_KEY=" + awsSecret + "\n",
		"project/.git-credentials":      "https://me:" + gitCred + "@github.com\n",
		"project/.netrc":                "machine example.com login me password " + netrcPass + "\n",
		"project/.env.example":          "AWS_ACCESS_KEY_ID=\n",
		"project/readme.md":             "the project",
		"home/carol/.config":            "->../../cfg/carol",
		"cfg/carol/gh/hosts.yml":        "github.com:\n  oauth_token: " + gho + "\n",
		"cfg/carol/other/settings.json": "{}",
	})
	a.call(t, "POST", "/boxes/amber-fox/snapshots?wait=true", a.owner, map[string]any{"name": "links"}).must(t, 200)
	made := a.call(t, "POST", "/boxes/amber-fox/snapshots/links/shares", a.owner, map[string]any{}).must(t, 201)
	removed := map[string]bool{}
	for _, r := range made.JSON["share"].(map[string]any)["removed"].([]any) {
		removed[r.(string)] = true
	}
	for _, want := range []string{"data/alice/.ssh", "home/bob/.ssh", "keys/bob", "app/backup.key",
		"app/.env", "project/.git-credentials", "project/.netrc", "cfg/carol/gh/hosts.yml"} {
		if !removed[want] {
			t.Errorf("the share's copy does not leave out %s: %v", want, removed)
		}
	}
	if removed["project/.env.example"] {
		t.Errorf("the copy leaves out an example .env: %v", removed)
	}
	a.call(t, "POST", "/shares/redeem", a.owner, map[string]any{"code": made.str("code")}).must(t, 200)
	bx, err := a.Core.Box(t.Context(), snapshots.Owner(), "amber-fox-shared")
	if err != nil {
		t.Fatal(err)
	}
	files := everyFile(t, a.Local.BoxDir(providers.Guest{Ref: bx.GuestRef}))
	if files["app/main.go"] != "package main" || files["data/alice/notes.md"] != "alice's notes" || files["project/readme.md"] != "the project" ||
		files["cfg/carol/other/settings.json"] != "{}" {
		t.Fatalf("the redeemed box lacks its own files: %v", files)
	}
	for p, data := range files {
		for _, v := range []string{keyLine, "MIIEbobsKeyLine", awsID, awsSecret, gitCred, netrcPass, gho, "PRIVATE KEY"} {
			if strings.Contains(data, v) {
				t.Errorf("the share copy holds %.12s… in %s", v, p)
			}
		}
	}

	// Ordinary files holding each well-known shape, and a removed file's
	// value: Blocked, each named.
	shapes := map[string]string{
		"notes/key.txt":       "-----BEGIN EC PRIVATE KEY-----\nabc\n",
		"notes/aws.txt":       "id " + awsID,
		"notes/ghp.txt":       "token=" + ghp,
		"notes/gho.txt":       "t: " + gho,
		"notes/pat.txt":       `"` + ghPAT + `"`,
		"notes/anthropic.txt": "ANTHROPIC_API_KEY=" + antKey,
		"notes/openai.txt":    "OPENAI_API_KEY=" + openAIKey,
		"notes/value.txt":     "the netrc said " + netrcPass + " once",
	}
	plant(t, dir, shapes)
	a.call(t, "POST", "/boxes/amber-fox/snapshots?wait=true", a.owner, map[string]any{"name": "shapes"}).must(t, 200)
	ans := a.call(t, "POST", "/boxes/amber-fox/snapshots/shapes/shares", a.owner, map[string]any{})
	words := ans.errorWords()
	if ans.Status != 409 || !strings.HasPrefix(words, "Blocked: ") {
		t.Fatalf("a copy holding credentials was shared: %d %s", ans.Status, ans.Raw)
	}
	for p, what := range map[string]string{"notes/key.txt": "a private key", "notes/aws.txt": "an AWS access key",
		"notes/ghp.txt": "a GitHub token", "notes/gho.txt": "a GitHub token", "notes/pat.txt": "a GitHub token",
		"notes/anthropic.txt": "an Anthropic key", "notes/openai.txt": "an OpenAI key", "notes/value.txt": "a value of project/.netrc"} {
		if !strings.Contains(words, p+" ("+what+")") {
			t.Errorf("Blocked does not name %s (%s): %s", p, what, words)
		}
	}
	for _, v := range []string{awsID, ghp, antKey, openAIKey, netrcPass} {
		if strings.Contains(string(ans.Raw), v) {
			t.Errorf("the refusal shows a credential's value %.12s…", v)
		}
	}
	if list := a.call(t, "GET", "/shares", a.owner, nil).must(t, 200); len(list.JSON["shares"].([]any)) != 1 {
		t.Fatalf("a Blocked share made a code: %s", list.Raw)
	}
}

// TestShareBlocked: a token inside a source file cannot be removed without
// breaking the box, so the share is Blocked, names the file, and makes no
// code; a code made before the token came stops working too.
func TestShareBlocked(t *testing.T) {
	t.Parallel()
	a := setup(t)
	box := a.Box(t, snapshots.Owner(), "amber-fox")
	dir := a.Local.BoxDir(providers.Guest{Ref: box.GuestRef})
	plant(t, dir, map[string]string{"src/main.go": "package main\n\nconst token = \"" + ghp + "\"\n", "src/util.go": "package main"})
	a.call(t, "POST", "/boxes/amber-fox/snapshots?wait=true", a.owner, map[string]any{"name": "with a token"}).must(t, 200)
	ans := a.call(t, "POST", "/boxes/amber-fox/snapshots/with%20a%20token/shares", a.owner, map[string]any{})
	want := "Blocked: boxsnap cannot remove a credential from src/main.go (a GitHub token), so nothing is shared and no code is made."
	if ans.Status != 409 || !strings.HasPrefix(ans.errorWords(), want) || ans.str("code") != "" {
		t.Fatalf("a token in a source file: %d %s", ans.Status, ans.Raw)
	}
	var n int
	if err := a.Pool.QueryRow(t.Context(), "SELECT count(*) FROM shares").Scan(&n); err != nil || n != 0 {
		t.Fatalf("a Blocked share left %d codes (%v)", n, err)
	}
	// The dialog's plan says Blocked and names the file.
	p, err := a.Core.Contents().PlanShare(t.Context(), snapshots.Owner(), "amber-fox", "with a token")
	if err == nil || len(p.Blocked) != 1 || p.Blocked[0].Path != "src/main.go" || p.Blocked[0].What != "a GitHub token" {
		t.Fatalf("the plan: %+v, %v", p, err)
	}
}

// TestShareLiveCodesAtMostFive: five live codes at most, as the peer's
// team; a sixth is refused in words until one is revoked.
func TestShareLiveCodesAtMostFive(t *testing.T) {
	t.Parallel()
	a := setup(t)
	box := a.Box(t, snapshots.Owner(), "amber-fox")
	plant(t, a.Local.BoxDir(providers.Guest{Ref: box.GuestRef}), map[string]string{"app/main.go": "package main"})
	a.call(t, "POST", "/boxes/amber-fox/snapshots?wait=true", a.owner, map[string]any{"name": "s"}).must(t, 200)
	var first string
	for i := 0; i < snapshots.MaxLiveShares; i++ {
		made := a.call(t, "POST", "/boxes/amber-fox/snapshots/s/shares", a.owner, map[string]any{}).must(t, 201)
		if i == 0 {
			first = made.JSON["share"].(map[string]any)["id"].(string)
		}
	}
	ans := a.call(t, "POST", "/boxes/amber-fox/snapshots/s/shares", a.owner, map[string]any{})
	if ans.Status != 429 && ans.Status != 409 || ans.errorWords() != "This boxsnap already has 5 live share codes, the most it holds at a time: revoke one to make another." {
		t.Fatalf("a sixth live code: %d %s", ans.Status, ans.Raw)
	}
	a.call(t, "DELETE", "/shares/"+first, a.owner, nil).must(t, 200)
	a.call(t, "POST", "/boxes/amber-fox/snapshots/s/shares", a.owner, map[string]any{}).must(t, 201)
}

// TestRedeemOnlyCallsTheShareEndpoint: a redeem from another boxsnap calls
// its share endpoint whatever path the person typed, follows no redirect,
// waits no longer than its limits, takes no more than its cap, and says a
// refusal in boxsnap's words, not the other's status line.
func TestRedeemOnlyCallsTheShareEndpoint(t *testing.T) {
	t.Parallel()
	limits := snapshots.RedeemLimits{Answer: 300 * time.Millisecond, Idle: 300 * time.Millisecond, MaxBytes: 1 << 20}
	a := setupWith(t, coretest.Options{Redeem: limits})
	code := "bxs_" + strings.Repeat("A", 43)
	var mu sync.Mutex
	var paths []string
	hit := func(r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		paths = append(paths, r.Method+" "+r.URL.Path)
	}
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hit(r)
		w.WriteHeader(200)
	}))
	defer elsewhere.Close()
	block := make(chan struct{})
	defer close(block)
	serve := func(h http.HandlerFunc) string {
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hit(r); h(w, r) }))
		t.Cleanup(s.Close)
		return s.URL
	}
	redirect := serve(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere.URL+"/api/v1/shared", http.StatusTemporaryRedirect)
	})
	slow := serve(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-block:
		case <-time.After(10 * time.Second):
		}
	})
	stall := serve(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-tar")
		w.WriteHeader(200)
		w.(http.Flusher).Flush()
		select {
		case <-block:
		case <-time.After(10 * time.Second):
		}
	})
	huge := serve(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-tar")
		tw := tar.NewWriter(w)
		size := int64(4 << 20)
		_ = tw.WriteHeader(&tar.Header{Name: "snapshots/sn0123456789ab.tar.gz.0000", Size: size, Mode: 0o644, Typeflag: tar.TypeReg})
		chunk := make([]byte, 64<<10)
		for n := int64(0); n < size; n += int64(len(chunk)) {
			if _, err := tw.Write(chunk); err != nil {
				return
			}
		}
		tw.Close()
	})
	declared := serve(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-tar")
		w.Header().Set("Content-Length", fmt.Sprint(int64(10<<30)))
		w.WriteHeader(200)
	})
	evil := serve(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprint(w, "EVIL WORDS from the remote")
	})
	gone := serve(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusGone) })

	host := func(u string) string { return strings.TrimPrefix(u, "http://") }
	for _, c := range []struct {
		from, words string
		within      time.Duration
	}{
		{redirect + "/some/where/else?x=1#f", host(redirect) + " answered with a redirect, which boxsnap does not follow: give the address of the boxsnap itself. Nothing was imported.", 2 * time.Second},
		{slow + "/api/v2/other", host(slow) + " did not answer within 300ms. Nothing was imported.", 2 * time.Second},
		{stall, host(stall) + " did not answer within 300ms. Nothing was imported.", 2 * time.Second},
		{huge, "The copy from " + host(huge) + " is over 1 MB, the most boxsnap takes. Nothing was imported.", 5 * time.Second},
		{declared, "The copy from " + host(declared) + " is over 1 MB, the most boxsnap takes. Nothing was imported.", 2 * time.Second},
		{evil, host(evil) + " refused the code. Nothing was imported.", 2 * time.Second},
		{gone, host(gone) + " has no live share code like that: it is wrong, revoked or expired. Nothing was imported.", 2 * time.Second},
		{"http://me:pw@" + host(gone), "Give the other boxsnap's address without a name or password in it.", 2 * time.Second},
	} {
		start := time.Now()
		ans := a.call(t, "POST", "/shares/redeem", a.owner, map[string]any{"code": code, "from": c.from})
		took := time.Since(start)
		if ans.Status < 400 || ans.errorWords() != c.words {
			t.Errorf("from %s: %d %s, want %q", c.from, ans.Status, ans.Raw, c.words)
		}
		if took > c.within {
			t.Errorf("from %s: refused after %s, not within %s", c.from, took, c.within)
		}
		if strings.Contains(string(ans.Raw), "EVIL") || strings.Contains(string(ans.Raw), "Forbidden") {
			t.Errorf("from %s: the remote's words are shown: %s", c.from, ans.Raw)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(paths) != 7 {
		t.Errorf("the remotes were called %d times, not once each of 7: %v", len(paths), paths)
	}
	for _, p := range paths {
		if p != "POST /api/v1/shared" {
			t.Errorf("a remote was called at %s, not the share endpoint", p)
		}
	}
	// Nothing was imported.
	if boxes, err := a.Core.Box(t.Context(), snapshots.Owner(), "amber-fox-shared"); err == nil {
		t.Errorf("a refused redeem made a box: %v", boxes)
	}
}
