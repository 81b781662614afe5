package api_test

import (
	"bytes"
	"io"
	"io/fs"
	"net/http"
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

// planted is a credential's value, planted in a box's sign-in files.
const planted = "AKIAPLANTEDSECRET0000"

// everyFile reads every regular file under dir, by its relative path.
func everyFile(t testing.TB, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		raw, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = string(raw)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestShareCodeScrubbed makes a share code for a snapshot of a box with
// credentials planted in its sign-in files, and redeems it on the same
// install and on another: the redeemed box, and its snapshot, hold none of
// them, nor what the settings add; the code is shown once and kept only
// hashed; it can be revoked, and it expires.
func TestShareCodeScrubbed(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	a, b := setupWith(t, coretest.Options{Now: clock}), setup(t)
	box := a.Box(t, snapshots.Owner(), "amber-fox")
	dir := a.Local.BoxDir(providers.Guest{Ref: box.GuestRef})
	for rel, data := range map[string]string{
		"app/main.go":                    "package main",
		".ssh/id_ed25519":                planted,
		".git-credentials":               "https://me:" + planted + "@github.com",
		"home/alice/.aws/credentials":    "[default]\naws_secret_access_key=" + planted,
		"home/alice/work/readme.md":      "hello",
		"root/.claude/.credentials.json": `{"token":"` + planted + `"}`,
		".config/secret-app/token":       planted,
		".boxsnap/env":                   "TOKEN=" + planted,
	} {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	st, err := a.Core.Settings(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	st.AlsoRemove = []string{".config/secret-app"}
	if err := a.Core.SaveSettings(t.Context(), snapshots.Owner(), st); err != nil {
		t.Fatal(err)
	}
	a.call(t, "POST", "/boxes/amber-fox/snapshots?wait=true", a.owner, map[string]any{"name": "ready to share"}).must(t, 200)

	// An agent makes no share code.
	agentToken, _ := a.agent(t, "Share it")
	if ans := a.call(t, "POST", "/boxes/amber-fox/snapshots/ready%20to%20share/shares", agentToken, map[string]any{}); ans.Status < 400 {
		t.Fatalf("an agent made a share code: %s", ans.Raw)
	}

	made := a.call(t, "POST", "/boxes/amber-fox/snapshots/ready%20to%20share/shares", a.owner, map[string]any{}).must(t, 201)
	code := made.str("code")
	if !strings.HasPrefix(code, "bxs_") || len(code) != 47 {
		t.Fatalf("code %q", code)
	}
	share := made.JSON["share"].(map[string]any)
	removed := map[string]bool{}
	for _, r := range share["removed"].([]any) {
		removed[r.(string)] = true
	}
	for _, want := range []string{".ssh", ".git-credentials", "home/alice/.aws/credentials", "root/.claude/.credentials.json", ".config/secret-app", ".boxsnap/env"} {
		if !removed[want] {
			t.Errorf("the share's copy does not leave out %s: %v", want, share["removed"])
		}
	}
	exp, _ := time.Parse(time.RFC3339Nano, share["expiresAt"].(string))
	if d := exp.Sub(now); d < 7*24*time.Hour-time.Minute || d > 7*24*time.Hour+time.Minute {
		t.Fatalf("the code works %s, not the default 7 days", d)
	}
	// Shown once: the list never holds it, nor does the database.
	list := a.call(t, "GET", "/shares", a.owner, nil).must(t, 200)
	if strings.Contains(string(list.Raw), code) || len(list.JSON["shares"].([]any)) != 1 {
		t.Fatalf("the list: %s", list.Raw)
	}
	var stored int
	if err := a.Pool.QueryRow(t.Context(), "SELECT count(*) FROM shares WHERE code_hash = sha256($1::bytea)", []byte(code)).Scan(&stored); err != nil || stored != 1 {
		t.Fatalf("the code's hash is not what is stored (%d, %v)", stored, err)
	}

	clean := func(e *env, boxName string) {
		t.Helper()
		bx, err := e.Core.Box(t.Context(), snapshots.Owner(), boxName)
		if err != nil {
			t.Fatal(err)
		}
		files := everyFile(t, e.Local.BoxDir(providers.Guest{Ref: bx.GuestRef}))
		if files["app/main.go"] != "package main" || files["home/alice/work/readme.md"] != "hello" {
			t.Fatalf("the redeemed box lacks its own files: %v", files)
		}
		for p, data := range files {
			if strings.Contains(data, planted) {
				t.Fatalf("the redeemed box %s holds the planted credential in %s", boxName, p)
			}
		}
		// Its snapshot, restored, holds none either.
		e.call(t, "POST", "/boxes/"+boxName+"/snapshots/ready%20to%20share/restore?wait=true", e.owner, map[string]any{"replace": true}).must(t, 200)
		for p, data := range everyFile(t, e.Local.BoxDir(providers.Guest{Ref: bx.GuestRef})) {
			if strings.Contains(data, planted) {
				t.Fatalf("the redeemed box's snapshot holds the planted credential in %s", p)
			}
		}
	}

	// Redeemed on this install.
	r := a.call(t, "POST", "/shares/redeem", a.owner, map[string]any{"code": code}).must(t, 200)
	if r.JSON["made"] != true || r.str("boxName") != "amber-fox-shared" {
		t.Fatalf("redeem: %s", r.Raw)
	}
	clean(a, "amber-fox-shared")

	// Redeemed on another install that reaches this one: the copy, then an
	// import there (what `boxsnap snapshot redeem --from` does).
	resp, err := http.Post(a.srv.URL+"/api/v1/shared", "application/json", strings.NewReader(`{"code":"`+code+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	copyFile, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || bytes.Contains(copyFile, []byte(planted)) {
		t.Fatalf("the shared copy: %d, holds the credential: %v", resp.StatusCode, bytes.Contains(copyFile, []byte(planted)))
	}
	b.upload(t, b.owner, copyFile).must(t, 200)
	clean(b, "amber-fox-shared")

	// A wrong code, a revoked one, an expired one.
	if ans := a.call(t, "POST", "/shares/redeem", a.owner, map[string]any{"code": "bxs_" + strings.Repeat("x", 43)}); ans.Status != 404 {
		t.Fatalf("a wrong code: %s", ans.Raw)
	}
	a.call(t, "DELETE", "/shares/"+share["id"].(string), a.owner, nil).must(t, 200)
	if ans := a.call(t, "POST", "/shares/redeem", a.owner, map[string]any{"code": code}); ans.Status != 410 || ans.errorWords() != "This share code was revoked." {
		t.Fatalf("a revoked code: %s", ans.Raw)
	}
	short := a.call(t, "POST", "/boxes/amber-fox/snapshots/ready%20to%20share/shares", a.owner, map[string]any{"days": 1}).must(t, 201).str("code")
	mu.Lock()
	now = now.Add(25 * time.Hour)
	mu.Unlock()
	if ans := a.call(t, "POST", "/shares/redeem", a.owner, map[string]any{"code": short}); ans.Status != 410 || !strings.HasPrefix(ans.errorWords(), "This share code expired on ") {
		t.Fatalf("an expired code: %s", ans.Raw)
	}
}
