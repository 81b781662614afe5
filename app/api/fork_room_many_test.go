package api_test

import (
	"crypto/rand"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/providers"
)

// TestForkNowIntoManyCountsEveryCopy: box_fork of the box now into count
// boxes checks room for the take, the forks' copies and what each fork
// takes at once (its disk image) before it takes:
// on a storage with room for one fork of the box but not five, a fork
// into five is refused in words, and nothing is taken or made.
func TestForkNowIntoManyCountsEveryCopy(t *testing.T) {
	t.Parallel()
	host := smallDisk(t, 448<<20)
	root := filepath.Join(host, "local")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	e := setupWith(t, coretest.Options{LocalRoot: root})
	token, agent := e.agent(t, "Try three fixes")
	src := e.Box(t, agent, "amber-fox")
	// Data that does not compress, a fifth of what the storage has free:
	// the fork's copy (one, where forks share it) and the take are each
	// about that, and each fork's own disk image takes about 96 MiB at
	// once, so the storage has room for one fork and its take, not for
	// five forks.
	var fs syscall.Statfs_t
	if err := syscall.Statfs(root, &fs); err != nil {
		t.Fatal(err)
	}
	data := make([]byte, int64(fs.Bavail)*fs.Bsize/5)
	if _, err := rand.Read(data); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.Local.BoxDir(providers.Guest{Ref: src.GuestRef}), "data.bin"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	one := e.call(t, "GET", "/boxes/amber-fox/snapshots/"+e.call(t, "POST", "/tools/box_snapshot", token, map[string]any{"box": "amber-fox", "name": "sized"}).must(t, 200).str("snapshot")+"/fork", token, nil).must(t, 200)
	if one.JSON["ok"] != true {
		t.Fatalf("one fork does not fit, so the test says nothing of five: %s", one.Raw)
	}
	before := e.snapshotNames(t, "amber-fox")

	a := e.call(t, "POST", "/tools/box_fork", token, map[string]any{"box": "amber-fox", "count": 5, "name": "fix"}).must(t, 409)
	contains(t, a.errorWords(), "free, and the 5 forks need about ")
	if names := e.snapshotNames(t, "amber-fox"); len(names) != len(before) {
		t.Fatalf("a fork refused for room took a snapshot: %q, before %q", names, before)
	}
	for _, name := range []string{"fix-1", "fix-2", "fix-3", "fix-4", "fix-5"} {
		if _, err := e.Core.Box(t.Context(), agent, name); err == nil {
			t.Fatalf("%s was made by a refused fork", name)
		}
	}
}
