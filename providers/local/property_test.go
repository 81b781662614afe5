package local

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/local/store"
)

// treeOf describes a folder exactly enough for a restore to be compared
// with what was taken: every path's type, permission bits, size and content
// hash, or link target.
func treeOf(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := make(map[string]string)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			out[rel] = "link -> " + target
		case fi.Mode().IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(data)
			out[rel] = fmt.Sprintf("file %v %d %s", fi.Mode().Perm(), len(data), hex.EncodeToString(sum[:]))
		case fi.IsDir():
			if rel != "." {
				out[rel] = fmt.Sprintf("folder %v", fi.Mode().Perm())
			}
		case fi.Mode()&fs.ModeNamedPipe != 0:
			out[rel] = fmt.Sprintf("fifo %v", fi.Mode().Perm())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// treeDiff says how got differs from want, "" when it does not.
func treeDiff(want, got map[string]string) string {
	var lines []string
	for p, w := range want {
		if g, ok := got[p]; !ok {
			lines = append(lines, "missing "+p+" ("+w+")")
		} else if g != w {
			lines = append(lines, p+": "+g+", want "+w)
		}
	}
	for p, g := range got {
		if _, ok := want[p]; !ok {
			lines = append(lines, "extra "+p+" ("+g+")")
		}
	}
	sort.Strings(lines)
	if len(lines) > 8 {
		lines = append(lines[:8], fmt.Sprintf("… %d more", len(lines)-8))
	}
	return strings.Join(lines, "; ")
}

// TestEveryReadySnapshotRestoresByteExact drives random sequences of take,
// restore (with an undo taken first), undo, delete, fork, reset, thinning,
// import and sweep on one box, with its change journal on and off, and after
// every step restores each snapshot the store holds whole into a scratch
// folder (the restore's own writing, apply) and compares it with what the
// box held when it was taken. Replay a run with BOXSNAP_JOURNAL_SEED.
func TestEveryReadySnapshotRestoresByteExact(t *testing.T) {
	t.Parallel()
	seed := journalSeed(t)
	rng := rand.New(rand.NewPCG(seed, 70))
	e := setupJournal(t, t.TempDir(), Config{})
	e.b.Templates = t.TempDir() // reset's template root: the box is made from none
	ch := newChurner(t, seed, e.dir)
	ch.seedTree()

	taken := make(map[string]map[string]string) // snapshot ID → the box at its take
	var order []string                          // snapshot IDs, oldest first
	box := make(map[string]string)              // snapshot ID → the box it is of
	running := true
	ref := func(id string) providers.SnapshotRef {
		return providers.SnapshotRef{ID: id, Ref: id, Guest: e.g}
	}
	pick := func() string {
		if len(order) == 0 {
			return ""
		}
		return order[rng.IntN(len(order))]
	}
	// mine picks one of the box's own snapshots, not a fork's.
	mine := func() string {
		var own []string
		for _, id := range order {
			if box[id] == e.g.Ref {
				own = append(own, id)
			}
		}
		if len(own) == 0 {
			return ""
		}
		return own[rng.IntN(len(own))]
	}
	drop := func(id string) {
		delete(taken, id)
		for i, o := range order {
			if o == id {
				order = append(order[:i], order[i+1:]...)
				return
			}
		}
	}
	take := func(g providers.Guest, dir string) string {
		t.Helper()
		tk, err := e.b.Snapshot(e.ctx, g, providers.SnapshotTake{Label: providers.Label{Box: g.Ref}}, nil)
		if err != nil {
			t.Fatalf("seed %d: take: %v", seed, err)
		}
		taken[tk.Ref] = treeOf(t, dir)
		box[tk.Ref] = g.Ref
		order = append(order, tk.Ref)
		return tk.Ref
	}
	restore := func(id string) {
		t.Helper()
		if _, err := e.b.RestoreSnapshot(e.ctx, e.g, ref(id), providers.StepRollback, nil); err != nil {
			t.Fatalf("seed %d: restore %s: %v", seed, id, err)
		}
		if d := treeDiff(taken[id], treeOf(t, e.dir)); d != "" {
			t.Fatalf("seed %d: the box after its restore to %s differs: %s", seed, id, d)
		}
	}
	check := func(step int, what string) {
		t.Helper()
		for _, id := range order {
			m, err := e.b.Store.LoadUsable(ref(id))
			if err != nil {
				t.Fatalf("seed %d, step %d (%s): snapshot %s cannot be restored: %v", seed, step, what, id, err)
			}
			scratch := filepath.Join(t.TempDir(), "scratch")
			if err := os.Mkdir(scratch, 0o755); err != nil {
				t.Fatal(err)
			}
			if _, err := e.b.Apply(e.ctx, scratch, m, nil, nil); err != nil {
				t.Fatalf("seed %d, step %d (%s): restoring snapshot %s into a scratch folder: %v", seed, step, what, id, err)
			}
			if d := treeDiff(taken[id], treeOf(t, scratch)); d != "" {
				t.Fatalf("seed %d, step %d (%s): snapshot %s restored differs from its take: %s", seed, step, what, id, d)
			}
			_ = os.RemoveAll(scratch)
		}
	}

	did := map[string]int{}
	for step := 0; step < 80; step++ {
		for range 1 + rng.IntN(4) {
			ch.step()
		}
		var what string
		switch r := rng.IntN(100); {
		case r < 30:
			what = "take"
			take(e.g, e.dir)
		case r < 45 && mine() != "":
			what = "restore with an undo"
			target := mine()
			undo := take(e.g, e.dir)
			restore(target)
			switch rng.IntN(3) {
			case 0:
				what = "restore and undo"
				restore(undo)
			case 1:
				// The target goes while the box is as it left it: the
				// next take must not reuse what only the target held.
				what = "restore, delete its target"
				if err := e.b.DeleteSnapshot(e.ctx, ref(target), nil); err != nil {
					t.Fatalf("seed %d: delete %s: %v", seed, target, err)
				}
				drop(target)
			}
		case r < 60 && len(order) > 0:
			what = "delete"
			id := pick()
			if err := e.b.DeleteSnapshot(e.ctx, ref(id), nil); err != nil {
				t.Fatalf("seed %d: delete %s: %v", seed, id, err)
			}
			drop(id)
		case r < 67 && len(order) > 2:
			what = "thinning"
			for _, id := range append([]string(nil), order[:len(order)/2]...) {
				if rng.IntN(2) == 0 {
					if err := e.b.DeleteSnapshot(e.ctx, ref(id), nil); err != nil {
						t.Fatalf("seed %d: thin %s: %v", seed, id, err)
					}
					drop(id)
				}
			}
		case r < 74 && len(order) > 0:
			what = "fork"
			from := pick()
			id := providers.BoxIdentity{ID: "bxfork" + store.RandomSuffix()[:8], Kind: "linux"}
			fg, err := e.b.ForkSnapshot(e.ctx, ref(from), id, nil)
			if err != nil {
				t.Fatalf("seed %d: fork %s: %v", seed, from, err)
			}
			fc := newChurner(t, seed+uint64(step), e.b.BoxDir(fg))
			fc.prefix = "fork"
			fc.step()
			take(fg, e.b.BoxDir(fg))
			if err := e.b.Release(e.ctx, fg); err != nil {
				t.Fatalf("seed %d: release the fork: %v", seed, err)
			}
		case r < 78:
			what = "reset"
			if err := e.b.ResetGuest(e.ctx, e.g, providers.BoxSpec{}); err != nil {
				t.Fatalf("seed %d: reset: %v", seed, err)
			}
			running = false
			ch.seedTree()
		case r < 85 && mine() != "":
			what = "export, delete, import"
			id := mine()
			var buf bytes.Buffer
			if err := e.b.ExportSnapshot(e.ctx, ref(id), providers.ExportOptions{}, &buf); err != nil {
				t.Fatalf("seed %d: export %s: %v", seed, id, err)
			}
			if err := e.b.DeleteSnapshot(e.ctx, ref(id), nil); err != nil {
				t.Fatalf("seed %d: delete %s before its import: %v", seed, id, err)
			}
			got, err := e.b.ImportSnapshots(e.ctx, providers.ImportOptions{Group: e.g.Ref}, []io.Reader{&buf})
			if err != nil || len(got) != 1 || got[0].Ref.Ref != id {
				t.Fatalf("seed %d: import %s answered %+v, %v", seed, id, got, err)
			}
		case r < 90:
			what = "sweep"
			if _, err := e.b.Sweep(e.ctx); err != nil {
				t.Fatalf("seed %d: sweep: %v", seed, err)
			}
		default:
			// Stop or start the box: a stopped box's take walks its folder,
			// a running one's reads its journal.
			if running {
				what = "stop"
				if err := e.b.Stop(e.ctx, e.g); err != nil {
					t.Fatal(err)
				}
			} else {
				what = "start"
				if err := e.b.Start(e.ctx, e.g); err != nil {
					t.Fatal(err)
				}
			}
			running = !running
		}
		if what == "" {
			what = "take"
			take(e.g, e.dir)
		}
		did[what]++
		check(step, what)
	}
	t.Logf("steps: %v; %d snapshots held at the end", did, len(order))
}
