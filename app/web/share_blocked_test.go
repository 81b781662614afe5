package web

import (
	"context"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/contents"
	"github.com/boxsnap/boxsnap/app/snapshots/take"
	"github.com/boxsnap/boxsnap/providers"
)

// TestShareDialogSaysBlocked: for a snapshot whose files hold credentials
// boxsnap cannot remove, the Share code dialog shows the Blocked badge and
// names each file with what it holds, offers no Make code, and a post of
// its form makes no code.
func TestShareDialogSaysBlocked(t *testing.T) {
	t.Parallel()
	s := newSite(t, coretest.Options{})
	ctx := context.Background()
	b := s.env.Box(t, snapshots.Owner(), "amber-fox")
	dir := s.env.Local.BoxDir(providers.Guest{Ref: b.GuestRef})
	// Credential values of their shapes, none in any real use.
	for rel, data := range map[string]string{
		"src/main.go":   "package main\n\nconst token = \"ghp_0123456789abcdefghijABCDEFGHIJ012345\"\n",
		"notes/aws.txt": "id AKIAIOSFODNN7EXAMPLE\n",
		"src/util.go":   "package main\n",
	} {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	op, sn, err := s.env.Take.Take(ctx, snapshots.Owner(), take.TakeRequest{Box: "amber-fox", Name: "with tokens"})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.env.Wait(t, op); got.State != snapshots.OpDone {
		t.Fatalf("the take ended %s", got.State)
	}
	path := "/boxes/amber-fox/snapshots/" + sn.ID + "/share"
	w := s.do(t, "GET", path, nil, nil)
	if w.Code != http.StatusOK {
		t.Fatalf("the share dialog answered %d: %s", w.Code, w.Body)
	}
	page := w.Body.String()
	if !strings.Contains(page, `<strong class="badge">`+contents.BlockedWord+`</strong>`) || contents.BlockedWord != "Blocked" {
		t.Errorf("the dialog shows no Blocked badge: %s", page)
	}
	i := strings.Index(page, `id="share-blocked"`)
	if i < 0 {
		t.Fatalf("the dialog lists no blocking files: %s", page)
	}
	list := page[i:]
	list = list[:strings.Index(list, "</ul>")]
	for _, want := range []string{"<li><code>src/main.go</code>: a GitHub token</li>", "<li><code>notes/aws.txt</code>: an AWS access key</li>"} {
		if !strings.Contains(list, want) {
			t.Errorf("the Blocked list does not say %s: %s", want, list)
		}
	}
	if strings.Contains(list, "src/util.go") {
		t.Errorf("the Blocked list names a file that holds no credential: %s", list)
	}
	for _, v := range []string{"ghp_0123456789", "AKIAIOSFODNN7EXAMPLE"} {
		if strings.Contains(page, v) {
			t.Errorf("the dialog shows a credential's value %.12s…", v)
		}
	}
	if strings.Contains(page, "Make code") || strings.Contains(page, `name="days"`) {
		t.Errorf("a Blocked dialog offers to make a code: %s", page)
	}

	// Its form posted anyway: refused, with no code shown or made.
	w = s.do(t, "POST", path, url.Values{"days": {"7"}}, nil)
	if w.Code < 400 || strings.Contains(w.Body.String(), `id="share-code"`) {
		t.Fatalf("a post of a Blocked dialog answered %d: %s", w.Code, w.Body)
	}
	if !strings.Contains(w.Body.String(), "Blocked: boxsnap cannot remove a credential from ") {
		t.Errorf("the refusal does not say Blocked: %s", w.Body)
	}
	var n int
	if err := s.env.Pool.QueryRow(ctx, "SELECT count(*) FROM shares").Scan(&n); err != nil || n != 0 {
		t.Fatalf("a Blocked share left %d codes (%v)", n, err)
	}
}
