package local

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/local/confined"
	"github.com/boxsnap/boxsnap/providers/local/store"
)

// within fails the test when fn does not return in a few seconds: a pipe
// holds it.
func within(t *testing.T, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); fn() }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatalf("%s did not answer within 5 s: a pipe in the box holds it", what)
	}
}

// pipeAt puts a named pipe at rel in place of what is there, and releases,
// at the test's end, whatever open of it waits.
func pipeAt(t *testing.T, dir, rel string) {
	t.Helper()
	p := filepath.Join(dir, rel)
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	if err := unix.Mkfifo(p, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if fd, err := unix.Open(p, unix.O_WRONLY|unix.O_NONBLOCK, 0); err == nil {
			unix.Close(fd)
		}
	})
}

// TestLiveFIFONeverBlocksAfterTheScan: a pipe the box renames over a file
// after the scan saw the file never holds the take nor the compare: each
// opens it non-blocking and checks it by its descriptor. The take records
// the pipe as what is there now; the compare finds it changed; the diff of
// its path refuses it in words.
func TestLiveFIFONeverBlocksAfterTheScan(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.write(t, "a.txt", "aaaa")
	e.write(t, "b.txt", "bbbb")
	_, first := e.take(t)

	e.write(t, "a.txt", "AAAA") // the same size: the compare reads it
	e.b.hooks.AfterScan = func() { pipeAt(t, e.dir, "a.txt") }
	var ref providers.SnapshotRef
	within(t, "the take", func() { _, ref = e.take(t) })
	e.b.hooks.AfterScan = nil
	m, err := e.b.Store.LoadUsable(ref)
	if err != nil {
		t.Fatal(err)
	}
	var got *store.Entry
	for i := range m.Entries {
		if m.Entries[i].Path == "a.txt" {
			got = &m.Entries[i]
		}
	}
	if got == nil || got.Type != store.TypeFIFO {
		t.Fatalf("the take recorded a.txt as %+v, not as the pipe there now", got)
	}

	// The compare's read of a file whose stat moved: the scan saw a file,
	// a pipe is there when it is read.
	e.write(t, "b.txt", "BBBB")
	var st unix.Stat_t
	if err := unix.Lstat(filepath.Join(e.dir, "b.txt"), &st); err != nil {
		t.Fatal(err)
	}
	pipeAt(t, e.dir, "b.txt")
	root, err := confined.OpenTree(e.dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	within(t, "the compare's read", func() {
		if _, _, err := e.b.Writer.HashBeneath(root, "b.txt", &confined.FileID{Dev: uint64(st.Dev), Ino: st.Ino}); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("the compare read a pipe as b.txt: %v", err)
		}
	})
	within(t, "the compare", func() {
		changes, err := e.b.CompareFiles(e.ctx, first, nil)
		if err != nil {
			t.Errorf("compare: %v", err)
		}
		found := false
		for _, c := range changes {
			found = found || c.Path == "b.txt" && c.Change == providers.ChangeChanged
		}
		if !found {
			t.Errorf("the compare does not list b.txt as changed: %+v", changes)
		}
	})
	within(t, "the diff", func() {
		_, err := e.b.DiffFile(e.ctx, first, nil, "b.txt")
		var refused *providers.RefusedError
		if !errors.As(err, &refused) || refused.Why != "b.txt in the box now is a named pipe, not a file" {
			t.Errorf("the diff of a pipe: %v", err)
		}
	})
	// A pipe at the identity marker: the take reads no version, at once.
	pipeAt(t, e.dir, confined.IdentityFile)
	within(t, "a take with a pipe at .boxsnap/identity", func() { e.take(t) })
}
