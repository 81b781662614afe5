package local

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/local/store"
)

// TestForkKeepsTemplateBounds: a box made from a box template with small
// limits (256 MiB, 64 open files, 40 processes), its own environment and
// its own user keeps them when it is forked and when it is reset: the new
// box's process runs with the same limits, environment and user, not the
// backend's defaults (4 GiB, 1,024, 512).
func TestForkKeepsTemplateBounds(t *testing.T) {
	base := passable(t)
	tmpl := filepath.Join(base, "templates")
	if err := os.MkdirAll(filepath.Join(tmpl, "small"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tmpl, "small", "README"), []byte("small box\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := New(Config{Root: filepath.Join(base, "local"), Templates: tmpl, Install: "in-test", NoSync: true, StopTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	unmountAtEnd(t, b)
	user := ""
	if os.Geteuid() == 0 {
		user = "nobody" // not the backend's own boxsnap-box
	}
	lim := providers.BoxLimits{MemoryBytes: 256 << 20, OpenFiles: 64, Processes: 40}
	cmd := `id -un > user; env > env; cat /proc/self/limits > limits; echo done > done; while :; do sleep 1; done`
	spec := providers.BoxSpec{Box: providers.BoxIdentity{ID: "bxbounds1", Kind: "linux"}, Template: "small",
		Command: cmd, User: user, Env: map[string]string{"GREETING": "small-hello"}, Limits: lim}
	g, err := b.Acquire(t.Context(), spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Release(context.Background(), g) })

	// check starts the box, waits for its process to write what it runs
	// with, and stops it.
	check := func(t *testing.T, what string, g providers.Guest) {
		t.Helper()
		dir := b.BoxDir(g)
		for _, f := range []string{"done", "user", "env", "limits"} { // a fork's come from the snapshot
			if err := os.Remove(filepath.Join(dir, f)); err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
		}
		if err := b.Start(t.Context(), g); err != nil {
			t.Fatalf("%s: start: %v", what, err)
		}
		defer func() { _ = b.Stop(context.Background(), g) }()
		deadline := time.Now().Add(30 * time.Second)
		for {
			if _, err := os.Stat(filepath.Join(dir, "done")); err == nil {
				break
			}
			if time.Now().After(deadline) {
				log, _ := os.ReadFile(b.Path(store.DirState, g.Ref+".log"))
				t.Fatalf("%s: the box's process wrote nothing in 30 s; its log: %s", what, log)
			}
			time.Sleep(20 * time.Millisecond)
		}
		read := func(name string) string {
			data, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			return strings.TrimSpace(string(data))
		}
		if user != "" {
			if u := read("user"); u != user {
				t.Errorf("%s: the process runs as %s, want the template's %s", what, u, user)
			}
		}
		if env := read("env"); !strings.Contains(env, "GREETING=small-hello") {
			t.Errorf("%s: the process's environment is not the template's:\n%s", what, env)
		}
		limits := read("limits")
		for line, want := range map[string]int64{"Max open files": 64, "Max processes": 40, "Max data size": 256 << 20} {
			found := ""
			for _, l := range strings.Split(limits, "\n") {
				if f := strings.Fields(strings.TrimPrefix(l, line)); strings.HasPrefix(l, line) && len(f) >= 2 {
					found = f[0] + " " + f[1]
				}
			}
			if w := strconv.FormatInt(want, 10); found != w+" "+w {
				t.Errorf("%s: %s is %q, want the template's %s", what, line, found, w)
			}
		}
	}
	check(t, "the box", g)

	taken, err := b.Snapshot(t.Context(), g, providers.SnapshotTake{Label: providers.Label{Box: g.Ref}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	fork, err := b.ForkSnapshot(t.Context(), providers.SnapshotRef{ID: taken.Ref, Ref: taken.Ref, Guest: g},
		providers.BoxIdentity{ID: "bxbounds2", Kind: "linux"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Release(context.Background(), fork) })
	check(t, "the fork", fork)

	// A reset of a box whose template is gone gives the template folder and
	// command it was made from, nothing more: the box keeps its own bounds.
	if err := b.ResetGuest(t.Context(), g, providers.BoxSpec{Box: spec.Box, Template: "small", Command: cmd}); err != nil {
		t.Fatal(err)
	}
	check(t, "the reset box", g)
	// A reset from a template with other bounds takes them.
	if err := b.ResetGuest(t.Context(), fork, spec); err != nil {
		t.Fatal(err)
	}
	check(t, "the reset fork", fork)
}
