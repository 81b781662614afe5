package local

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/local/store"
)

// TestNoReadySnapshotNamesFreedContent is the four calls that made a ready
// snapshot unrestorable: take, restore to it, delete it, take. The last take
// must name only content the store holds, so its restore brings the files
// back, for a stopped box (the take walks the folder) and a running one (the
// take reads the change journal).
func TestNoReadySnapshotNamesFreedContent(t *testing.T) {
	t.Parallel()
	for _, running := range []bool{false, true} {
		name := "stopped"
		if running {
			name = "running"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var e env
			if running {
				e = setupJournal(t, t.TempDir(), Config{}).env
			} else {
				e = setup(t)
			}
			e.write(t, "kept.txt", "only the first snapshot holds this")
			_, s := e.take(t)
			e.write(t, "kept.txt", "changed after the take")
			if err := e.restore(t, s); err != nil {
				t.Fatalf("restore to the first snapshot: %v", err)
			}
			if err := e.b.DeleteSnapshot(e.ctx, s, nil); err != nil {
				t.Fatalf("delete the first snapshot: %v", err)
			}
			taken, last := e.take(t)
			h, ok := e.held(t, taken.Ref)
			if !ok || h.Incomplete {
				t.Fatalf("the take after the delete is %+v: %s", h, h.Error)
			}
			m, err := e.b.Manifest(taken.Ref)
			if err != nil {
				t.Fatal(err)
			}
			for _, en := range m.Entries {
				if en.Type != store.TypeFile {
					continue
				}
				if _, err := os.Lstat(e.b.ContentPath(en.Hash)); err != nil {
					t.Errorf("ready snapshot %s names content of %s the store does not hold: %v", taken.Ref, en.Path, err)
				}
			}
			if err := os.Remove(filepath.Join(e.dir, "kept.txt")); err != nil {
				t.Fatal(err)
			}
			if err := e.restore(t, providers.SnapshotRef{ID: last.ID, Ref: last.Ref, Guest: e.g}); err != nil {
				t.Fatalf("restore the take made after the delete: %v", err)
			}
			if got := e.read(t, "kept.txt"); got != "only the first snapshot holds this" {
				t.Fatalf("kept.txt = %q after the restore", got)
			}
		})
	}
}

// TestManifestCacheBounded: however many snapshots are taken, the manifest
// cache holds at most manifestCacheSize, and none of a deleted snapshot.
func TestManifestCacheBounded(t *testing.T) {
	t.Parallel()
	e := setup(t)
	var refs []providers.SnapshotRef
	for i := range 3 * store.ManifestCacheSize {
		e.write(t, "changing.txt", strconv.Itoa(i))
		_, r := e.take(t)
		refs = append(refs, r)
		if n := e.b.Cache.Size(); n > store.ManifestCacheSize {
			t.Fatalf("after %d takes the manifest cache holds %d manifests, more than %d", i+1, n, store.ManifestCacheSize)
		}
	}
	for _, r := range refs {
		if err := e.b.DeleteSnapshot(e.ctx, r, nil); err != nil {
			t.Fatal(err)
		}
	}
	if n := e.b.Cache.Size(); n != 0 {
		t.Fatalf("after every snapshot was deleted the manifest cache holds %d manifests", n)
	}
}

// TestTakeAlreadyPublishedIsDone: a take asked again with the ID of a
// snapshot it published (a step cut short after the publish, retried)
// answers that snapshot; the same ID asked for another box is refused, and
// the snapshot stays the first box's.
func TestTakeAlreadyPublishedIsDone(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.write(t, "state.txt", "taken once")
	lab := providers.Label{Box: e.g.Ref, Snapshot: store.NewSnapshotID()}
	first, err := e.b.Snapshot(e.ctx, e.g, providers.SnapshotTake{Label: lab}, nil)
	if err != nil {
		t.Fatal(err)
	}
	again, err := e.b.Snapshot(e.ctx, e.g, providers.SnapshotTake{Label: lab}, nil)
	if err != nil {
		t.Fatalf("taking snapshot %s again answered %v, want what its take answered", lab.Snapshot, err)
	}
	if again.Ref != first.Ref || again.Size == nil || first.Size == nil || *again.Size != *first.Size || !again.CapturedAt.Equal(first.CapturedAt) {
		t.Fatalf("taking snapshot %s again answered %+v, want %+v", lab.Snapshot, again, first)
	}
	g2, err := e.b.Acquire(e.ctx, providers.BoxSpec{Box: providers.BoxIdentity{ID: "bxother", Kind: "linux"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.b.Snapshot(e.ctx, g2, providers.SnapshotTake{Label: providers.Label{Box: g2.Ref, Snapshot: lab.Snapshot}}, nil); err == nil {
		t.Fatalf("snapshot %s of box %s was taken again as box %s's", lab.Snapshot, e.g.Ref, g2.Ref)
	}
	h, ok := e.held(t, lab.Snapshot)
	if !ok || h.Label.Box != e.g.Ref || h.Incomplete {
		t.Fatalf("after both asks snapshot %s is %+v", lab.Snapshot, h)
	}
}
