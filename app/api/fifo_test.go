package api_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/boxsnap/boxsnap/providers"
)

// TestLiveFIFONeverBlocks: a named pipe the box put at a file's path, and at
// its .boxsnap/identity, never holds a server thread: the diff route
// (?path=), box_snapshot_diff with and without a path, the compare and a
// take each answer within a few seconds, the diff with a clear word.
func TestLiveFIFONeverBlocks(t *testing.T) {
	t.Parallel()
	e := setup(t)
	tok, _ := e.agent(t, "Pipes")
	bx := e.call(t, "POST", "/boxes", tok, map[string]any{"name": "fifo-box", "template": "blank"}).must(t, 201)
	dir := e.Local.BoxDir(providers.Guest{Ref: bx.str("guestRef")})
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.call(t, "POST", "/tools/box_snapshot", tok, map[string]any{"box": "fifo-box", "name": "before"}).must(t, 200)

	var pipes []string
	pipe := func(rel string) {
		p := filepath.Join(dir, rel)
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
		if err := unix.Mkfifo(p, 0o644); err != nil {
			t.Fatal(err)
		}
		pipes = append(pipes, p)
	}
	pipe("notes.txt")
	pipe(".boxsnap/identity")
	// Were a call held by a pipe, a writer's open releases it at the end.
	t.Cleanup(func() {
		for _, p := range pipes {
			if fd, err := unix.Open(p, unix.O_WRONLY|unix.O_NONBLOCK, 0); err == nil {
				unix.Close(fd)
			}
		}
	})

	prompt := func(what, method, path string, body any) (answer, bool) {
		t.Helper()
		ch := make(chan answer, 1)
		go func() { ch <- e.call(t, method, path, tok, body) }()
		select {
		case a := <-ch:
			return a, true
		case <-time.After(5 * time.Second):
			t.Errorf("%s did not answer within 5 s: a pipe in the box holds it", what)
			return answer{}, false
		}
	}
	if a, ok := prompt("the diff route", "GET", "/boxes/fifo-box/snapshots/before/diff?path=notes.txt", nil); ok {
		if a.Status != 400 && a.Status != 409 && a.Status != 422 {
			t.Errorf("the diff route: status %d: %s", a.Status, a.Raw)
		}
		contains(t, a.errorWords(), "notes.txt in the box now is a named pipe, not a file")
	}
	if a, ok := prompt("box_snapshot_diff of a path", "POST", "/tools/box_snapshot_diff", map[string]any{"box": "fifo-box", "snapshot": "before", "path": "notes.txt"}); ok {
		contains(t, string(a.Raw), "notes.txt in the box now is a named pipe, not a file")
	}
	if a, ok := prompt("box_snapshot_diff", "POST", "/tools/box_snapshot_diff", map[string]any{"box": "fifo-box", "snapshot": "before"}); ok {
		a.must(t, 200)
		contains(t, a.str("message"), "1 file changed")
	}
	if a, ok := prompt("the compare route", "GET", "/boxes/fifo-box/snapshots/before/diff", nil); ok {
		a.must(t, 200)
	}
	if a, ok := prompt("a take", "POST", "/tools/box_snapshot", map[string]any{"box": "fifo-box", "name": "with pipes"}); ok {
		a.must(t, 200)
	}
}
