package cli_test

import (
	"archive/tar"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/app/cli"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/providers"
)

// TestCLILookInside: snapshot files, download (a file, a folder as a
// tar.gz) and diff, and a path that leaves the snapshot refused in words.
func TestCLILookInside(t *testing.T) {
	t.Parallel()
	g := setup(t)
	b := g.Box(t, snapshots.Owner(), "amber-fox")
	dir := g.Local.BoxDir(providers.Guest{Ref: b.GuestRef})
	if err := os.MkdirAll(filepath.Join(dir, "etc"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "etc", "app.conf"), []byte("port 80\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("etc/app.conf", filepath.Join(dir, "conf")); err != nil {
		t.Fatal(err)
	}
	g.ok(t, "take", "amber-fox", "--name", "before")

	out := g.ok(t, "files", "amber-fox", "before")
	says(t, out, "drwxr-xr-x", "etc/", "lrwxrwxrwx", "conf -> etc/app.conf")
	if strings.Index(out, "etc/") > strings.Index(out, "conf ->") {
		t.Fatalf("folders are not first:\n%s", out)
	}
	out = g.ok(t, "files", "amber-fox", "before", "etc")
	says(t, out, "-rw-r-----", "8", "app.conf")
	out = g.ok(t, "files", "amber-fox", "before", "etc/app.conf")
	says(t, out, "-rw-r-----", "app.conf")

	code, _, errw := g.run(t, g.env(), "files", "amber-fox", "before", "../../etc")
	if code != cli.ExitRefused {
		t.Fatalf("exit %d", code)
	}
	says(t, errw, `The path "../../etc" climbs out of the snapshot with ..`)

	work := t.TempDir()
	out = g.ok(t, "download", "amber-fox", "before", "etc/app.conf", "-o", filepath.Join(work, "app.conf"))
	says(t, out, "Wrote ", "etc/app.conf of ‘before’")
	if got, _ := os.ReadFile(filepath.Join(work, "app.conf")); string(got) != "port 80\n" {
		t.Fatalf("downloaded %q", got)
	}
	g.ok(t, "download", "amber-fox", "before", "-o", filepath.Join(work, "all.tar.gz"))
	f, err := os.Open(filepath.Join(work, "all.tar.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	var names []string
	for {
		h, err := tr.Next()
		if err != nil {
			break
		}
		names = append(names, h.Name)
	}
	if got := strings.Join(names, " "); got != "amber-fox/ amber-fox/conf amber-fox/etc/ amber-fox/etc/app.conf" {
		t.Fatalf("the snapshot's tar.gz holds %s", got)
	}

	if err := os.WriteFile(filepath.Join(dir, "etc", "app.conf"), []byte("port 8080\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	out = g.ok(t, "diff", "amber-fox", "before")
	says(t, out, "1 file changed, 0 added, 0 removed since then", "changed", "8 → 10", "etc/app.conf")
	out = g.ok(t, "diff", "amber-fox", "before", "etc/app.conf")
	if out != "--- a/etc/app.conf\n+++ b/etc/app.conf\n@@ -1 +1 @@\n-port 80\n+port 8080\n" {
		t.Fatalf("diff of a file:\n%s", out)
	}
}
