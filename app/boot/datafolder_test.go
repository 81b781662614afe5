package boot_test

import (
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/boxsnap/boxsnap/app/boot"
	"github.com/boxsnap/boxsnap/app/config"
	"github.com/boxsnap/boxsnap/app/dbtest"
	"github.com/boxsnap/boxsnap/providers/local"
)

// TestDataFolderReachableByBoxUser: serve with DATABASE_URL and a data folder
// that does not exist yet makes it so that a box's process, which runs as the
// unprivileged box user, reaches its box's folder (the folder was made 0700,
// and no box's process could start), while the local store's content,
// snapshots and state stay closed to that user. The box's own command is the
// probe: it says who it runs as and what it could list.
func TestDataFolderReachableByBoxUser(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("not root: a box's process runs as boxsnap's own user")
	}
	base := t.TempDir()
	// Each local box is a file system of its own (a loop mount, as root):
	// unmounted once boxsnap stops, before the folder is removed.
	t.Cleanup(func() { _ = local.UnmountAll(base) })
	// The folders above the data folder are the person's, not boxsnap's:
	// the test lets others pass them, as a host's /var/lib does.
	if err := local.Passable(base, os.TempDir()); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(base, "new", "data")
	env := map[string]string{"DATABASE_URL": dbtest.NewDSN(t), "BOXSNAP_DATA_DIR": data,
		"BOXSNAP_ADDR": "127.0.0.1:0", "BOXSNAP_PASSWORD": password}
	cfg, _, err := config.Load("serve", nil, func(k string) string { return env[k] }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	s := start(t, cfg, boot.Options{})

	for _, d := range []string{filepath.Join(base, "new"), data, cfg.LocalRoot, filepath.Join(cfg.LocalRoot, "boxes")} {
		fi, err := os.Stat(d)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o711 {
			t.Errorf("%s is %o, want 0711: others pass, not list", d, fi.Mode().Perm())
		}
	}
	for _, d := range []string{"content", "snapshots", "state"} {
		fi, err := os.Stat(filepath.Join(cfg.LocalRoot, d))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s is %o: open to others", d, fi.Mode().Perm())
		}
	}

	if resp, _ := s.do(t, "POST", "/signin", url.Values{"password": {password}}, nil); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign in: %d", resp.StatusCode)
	}
	resp, _ := s.do(t, "POST", "/settings/tokens", url.Values{"name": {"probe"}}, nil)
	_, body := s.do(t, "GET", resp.Header.Get("Location"), nil, nil)
	token := regexp.MustCompile(`bxt_[a-z2-7]+`).FindString(body)
	if token == "" {
		t.Fatal("no token made")
	}
	probe := "for d in content snapshots state; do if /bin/ls " + cfg.LocalRoot + "/$d >/dev/null 2>&1; then echo \"$d listed\"; else echo \"$d refused\"; fi; done > probe.tmp; " +
		"/usr/bin/id -un >> probe.tmp; /bin/mv probe.tmp probe; while :; do /bin/sleep 1; done"
	req, err := http.NewRequest("POST", s.url+"/api/v1/boxes", strings.NewReader(`{"name":"probe-box","backend":"local","command":`+quote(probe)+`}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("make the box: %d %s", resp.StatusCode, b)
	}

	var got []byte
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		found, _ := filepath.Glob(filepath.Join(cfg.LocalRoot, "boxes", "*", "probe"))
		if len(found) == 1 {
			if got, err = os.ReadFile(found[0]); err != nil {
				t.Fatal(err)
			}
			break
		}
	}
	if got == nil {
		t.Fatal("the box's process wrote nothing in its folder in 20 s: it did not start")
	}
	want := "content refused\nsnapshots refused\nstate refused\n" + local.DefaultBoxUser + "\n"
	if string(got) != want {
		t.Fatalf("the box's process said %q, want %q", got, want)
	}
}

// quote is s as a JSON string.
func quote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return `"` + r.Replace(s) + `"`
}
