package local

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/local/store"
)

// resetKillEnv holds, in a child test process, what TestResetKilledAt
// resets and at which step it dies (a resetKill as JSON).
const resetKillEnv = "BOXSNAP_TEST_RESET_KILLED"

// resetKill is a reset a child process runs and is killed in.
type resetKill struct {
	Root, Templates, Box, Step string
	Images                     bool
}

// resetKillSpec is the reset the kill tests ask: from the template
// folder devbox, with another command and disk bound than the box's, so
// the box's state says which self it is.
var resetKillSpec = providers.BoxSpec{Template: "devbox", Command: "sleep 86400",
	Limits: providers.BoxLimits{DiskBytes: 48 << 20}}

func resetKillBackend(t *testing.T, root, templates string, images bool) *Backend {
	t.Helper()
	b, err := New(Config{Root: root, Install: "in-test", StopTimeout: 2 * time.Second, DiskImages: images, Templates: templates})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestResetKilledAt is not a test of its own: it is the process that
// TestAResetKilledAtEachStepLeavesTheBoxWhole runs and that kills itself
// (SIGKILL, as a crash) at one step of a reset.
func TestResetKilledAt(t *testing.T) {
	at := os.Getenv(resetKillEnv)
	if at == "" {
		t.Skip("the reset TestAResetKilledAtEachStepLeavesTheBoxWhole runs and kills")
	}
	var k resetKill
	if err := json.Unmarshal([]byte(at), &k); err != nil {
		t.Fatal(err)
	}
	b := resetKillBackend(t, k.Root, k.Templates, k.Images)
	b.hooks.resetStep = func(step string) {
		if step == k.Step {
			_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {}
		}
	}
	err := b.ResetGuest(t.Context(), b.guestOf(k.Box, "linux"), resetKillSpec)
	t.Fatalf("the reset returned (%v) without reaching its step %q", err, k.Step)
}

// resetLeft lists what resets left under root: folders and images under
// a reset's names, mounts of them, and reset records.
func resetLeft(t *testing.T, root string) []string {
	t.Helper()
	var left []string
	for _, pat := range []string{"boxes/.reset-*", "disks/.reset-*", "state/*.reset"} {
		m, err := filepath.Glob(filepath.Join(root, pat))
		if err != nil {
			t.Fatal(err)
		}
		left = append(left, m...)
	}
	mounts, _ := os.ReadFile("/proc/self/mounts")
	for _, line := range strings.Split(string(mounts), "\n") {
		if f := strings.Fields(line); len(f) > 1 && strings.HasPrefix(f[1], root) && strings.Contains(f[1], "/.reset-") {
			left = append(left, "mount "+f[1])
		}
	}
	return left
}

// boxNames lists the names in a box's folder, its identity marker aside.
func boxNames(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		if e.Name() != ".boxsnap" {
			names = append(names, e.Name())
		}
	}
	return names
}

// TestAResetKilledAtEachStepLeavesTheBoxWhole kills (SIGKILL) a process
// at each step of its reset of a box, a plain folder, an image, and a
// plain folder given an image, then, as a process started after the
// kill: the box is its old self or its fresh self, its files and its
// state alike (never fresh files with the old state, nor a folder empty
// or missing); the sweep leaves no folder, image, mount or record under
// a reset's name; and the box resets again.
func TestAResetKilledAtEachStepLeavesTheBoxWhole(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name              string
		boxImage, toImage bool
		steps             []string
	}{
		{"plain", false, false, []string{"made", "written", "synced", "recorded", "swapped", "stated", "ended"}},
		{"image", true, true, []string{"made", "written", "synced", "recorded", "old unmounted", "swapped", "old moved", "mounted", "stated", "ended"}},
		{"plain to image", false, true, []string{"made", "written", "synced", "recorded", "swapped", "old moved", "mounted", "stated", "ended"}},
	}
	for _, c := range cases {
		for _, step := range c.steps {
			t.Run(c.name+"/"+step, func(t *testing.T) {
				t.Parallel()
				if c.toImage {
					loopOrSkip(t)
				}
				root, tmpl := t.TempDir(), t.TempDir()
				if err := os.MkdirAll(filepath.Join(tmpl, "devbox"), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(tmpl, "devbox", "fresh.txt"), []byte("from the template"), 0o644); err != nil {
					t.Fatal(err)
				}
				first := resetKillBackend(t, root, tmpl, c.boxImage)
				unmountAtEnd(t, first)
				g, err := first.Acquire(t.Context(), providers.BoxSpec{Box: providers.BoxIdentity{ID: "bx" + store.RandomSuffix()[:12], Kind: "linux"}})
				if err != nil {
					t.Fatal(err)
				}
				e := env{b: first, g: g, dir: first.BoxDir(g), ctx: t.Context()}
				e.write(t, "old.txt", "before the reset")
				e.take(t)

				k, _ := json.Marshal(resetKill{Root: root, Templates: tmpl, Box: g.Ref, Step: step, Images: c.toImage})
				child := exec.Command(os.Args[0], "-test.run=^TestResetKilledAt$", "-test.count=1", "-test.v")
				child.Env = append(os.Environ(), resetKillEnv+"="+string(k))
				out, err := child.CombinedOutput()
				var exit *exec.ExitError
				if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
					t.Fatalf("the reset was not killed at %q (%v):\n%s", step, err, out)
				}

				// A process started after the kill uses the box.
				b := resetKillBackend(t, root, tmpl, c.toImage)
				dir, err := b.existingBox(g)
				if err != nil {
					t.Fatalf("the box after a reset killed at %q: %v", step, err)
				}
				st, err := b.ReadState(g.Ref)
				if err != nil {
					t.Fatal(err)
				}
				names := boxNames(t, dir)
				switch {
				case slices.Equal(names, []string{"old.txt"}):
					if st.Last == "" || st.Command != "" || st.Limits.DiskBytes != 0 {
						t.Fatalf("killed at %q, the box holds its old files and the state of another: %+v", step, st)
					}
				case slices.Equal(names, []string{"fresh.txt"}):
					if st.Last != "" || st.Command != resetKillSpec.Command || st.Limits != resetKillSpec.Limits {
						t.Fatalf("killed at %q, the box holds its fresh files and the state of another: %+v", step, st)
					}
				default:
					t.Fatalf("killed at %q, the box holds %q: neither its old self nor its fresh self", step, names)
				}
				if _, err := b.Sweep(t.Context()); err != nil {
					t.Fatal(err)
				}
				if left := resetLeft(t, root); len(left) != 0 {
					t.Fatalf("after a reset killed at %q and the sweep, %q are left", step, left)
				}

				if err := b.ResetGuest(t.Context(), g, resetKillSpec); err != nil {
					t.Fatalf("the reset again after one killed at %q: %v", step, err)
				}
				if names := boxNames(t, dir); !slices.Equal(names, []string{"fresh.txt"}) {
					t.Fatalf("reset again, the box holds %q", names)
				}
				if c.toImage && mountsAt(t, dir) != 1 {
					t.Fatalf("reset again, the box's folder has %d mounts, want its own file system", mountsAt(t, dir))
				}
				if left := resetLeft(t, root); len(left) != 0 {
					t.Fatalf("the reset again left %q", left)
				}
			})
		}
	}
}
