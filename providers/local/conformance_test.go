package local_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/local"
	"github.com/boxsnap/boxsnap/providers/providertest"
)

func newBackend(t *testing.T) *local.Backend {
	t.Helper()
	b, err := local.New(local.Config{Root: t.TempDir(), Install: "in-test", NoSync: true})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	// Each box is a file system of its own (a loop mount, as root): it is
	// unmounted before the temporary folder is removed.
	t.Cleanup(func() { _ = local.UnmountAll(b.Root()) })
	return b
}

const stateFile = "work/state.txt"

func TestConformance(t *testing.T) {
	t.Parallel()
	providertest.Run(t, harness(newBackend))
}

// TestConformanceOverSharedTrees runs the suite where each box is a file
// system of its own, so a fork's box is an overlay over its snapshot's
// shared tree: its fork, the take of it and its restore as any box's.
func TestConformanceOverSharedTrees(t *testing.T) {
	t.Parallel()
	if why, _ := local.ProbeLoop(t.TempDir()); why != "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("a box cannot be a file system of its own here: " + why)
		}
		t.Skip("a box cannot be a file system of its own here: " + why)
	}
	providertest.Run(t, harness(func(t *testing.T) *local.Backend {
		t.Helper()
		b, err := local.New(local.Config{Root: t.TempDir(), Install: "in-test", NoSync: true, DiskImages: true})
		if err != nil {
			t.Fatalf("New: %v", err)
		}
		t.Cleanup(func() { _ = local.UnmountAll(b.Root()) })
		return b
	}))
}

// harness is the conformance suite's harness over backends newB makes.
func harness(newB func(t *testing.T) *local.Backend) providertest.Harness {
	return providertest.Harness{
		Kind:    "linux",
		Install: "in-test",
		New: func(t *testing.T) (providers.Backend, providers.Boxes) {
			b := newB(t)
			return b, b
		},
		NewGuest: func(t *testing.T, b providers.Backend, boxes providers.Boxes, id string) providers.Guest {
			g, err := boxes.Acquire(t.Context(), providers.BoxSpec{Box: providers.BoxIdentity{ID: id, Name: id, Kind: "linux"}})
			if err != nil {
				t.Fatalf("Acquire: %v", err)
			}
			writeState(t, b.(*local.Backend), g, "fresh")
			return g
		},
		WriteState: func(t *testing.T, b providers.Backend, g providers.Guest, s string) {
			writeState(t, b.(*local.Backend), g, s)
		},
		ReadState: func(t *testing.T, b providers.Backend, g providers.Guest) string {
			data, err := os.ReadFile(filepath.Join(b.(*local.Backend).BoxDir(g), stateFile))
			if err != nil {
				t.Fatalf("read state: %v", err)
			}
			return string(data)
		},
		Unreachable: func(t *testing.T) providers.Backend {
			b := newB(t) // as the suite's, its data folder gone
			_ = local.UnmountAll(b.Root())
			if err := os.RemoveAll(b.Root()); err != nil {
				t.Fatal(err)
			}
			return b
		},
	}
}

func writeState(t *testing.T, b *local.Backend, g providers.Guest, s string) {
	t.Helper()
	p := filepath.Join(b.BoxDir(g), stateFile)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}
