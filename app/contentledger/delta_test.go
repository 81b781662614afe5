package contentledger

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/local"
	"github.com/boxsnap/boxsnap/providers/local/ship"
)

// tree is what the test wrote in the box: each file's bytes by path.
type tree map[string][]byte

// writeTree writes n small files of distinct content.
func (f *fixture) writeTree(n int) tree {
	t := tree{}
	for i := range n {
		t[fmt.Sprintf("d%02d/f%04d.txt", i%50, i)] = fmt.Appendf(nil, "file %d of the tree\n", i)
	}
	for rel, data := range t {
		f.writeBytes(rel, data)
	}
	return t
}

func (f *fixture) writeBytes(rel string, data []byte) {
	path := filepath.Join(f.b.BoxDir(f.g), rel)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		f.t.Fatal(err)
	}
}

// churn changes every hundredth file of t.
func (f *fixture) churn(t tree, round int) int {
	changed := 0
	for _, rel := range slices.Sorted(func(yield func(string) bool) {
		for k := range t {
			if !yield(k) {
				return
			}
		}
	}) {
		if changed*100 < len(t) && indexOf(rel)%100 == round%100 {
			t[rel] = append(slices.Clone(t[rel]), fmt.Appendf(nil, "churned in round %d\n", round)...)
			f.writeBytes(rel, t[rel])
			changed++
		}
	}
	return changed
}

// indexOf is the number in a tree file's name.
func indexOf(rel string) int {
	var n int
	_, _ = fmt.Sscanf(filepath.Base(rel), "f%04d.txt", &n)
	return n
}

// rows counts what the ledger records for snapshot: its names and drops.
func (f *fixture) rows(snapshot string) (names, drops int) {
	f.t.Helper()
	err := f.ledger.pool.QueryRow(f.ctx, `SELECT (SELECT count(*) FROM content_names WHERE snapshot_id = $1),
		(SELECT count(*) FROM content_drops WHERE snapshot_id = $1)`, snapshot).Scan(&names, &drops)
	if err != nil {
		f.t.Fatal(err)
	}
	return names, drops
}

func (f *fixture) sweep() int {
	f.t.Helper()
	f.runOutClaims()
	n, err := f.ledger.Sweep(f.ctx, f.bucket)
	if err != nil {
		f.t.Fatal(err)
	}
	return n
}

func (f *fixture) deleteSnapshot(id string) error {
	return f.b.DeleteSnapshot(f.ctx, providers.SnapshotRef{Ref: id, ID: id, Guest: f.g}, nil)
}

// forkElsewhere forks snapshot id on a second host that has only the
// bucket, and fails the test unless the fork holds want byte-exact.
func (f *fixture) forkElsewhere(id string, want tree) {
	f.t.Helper()
	other, err := local.New(local.Config{Root: f.t.TempDir(), Install: "in-test", NoSync: true,
		ContentStore: &ship.Remote{Objects: f.bucket, Keys: f.cfg, Ledger: f.ledger}})
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { _ = local.UnmountAll(other.Root()) })
	g, err := other.ForkSnapshot(f.ctx, providers.SnapshotRef{Ref: id, ID: id, Guest: f.g},
		providers.BoxIdentity{ID: "bxother" + id[len(id)-7:], Kind: "linux"}, nil)
	if err != nil {
		f.t.Fatalf("snapshot %s forked on a second host from the bucket: %v", id, err)
	}
	dir := other.BoxDir(g)
	got := 0
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if w, ok := want[rel]; ok {
			got++
			if !bytes.Equal(data, w) {
				return fmt.Errorf("%s is not byte-exact", rel)
			}
		}
		return nil
	})
	if err != nil || got != len(want) {
		f.t.Fatalf("snapshot %s forked on a second host: %d of %d files byte-exact (%v)", id, got, len(want), err)
	}
}

// keptKeys fails the test when the bucket lacks a key of held: what ready
// snapshots held when they were taken, whatever the ledger says now.
func (f *fixture) keptKeys(when string, held ...map[string]bool) {
	f.t.Helper()
	have := f.inBucket()
	for _, h := range held {
		for k := range h {
			if !have[k] {
				f.t.Fatalf("%s: object %s, which a ready snapshot holds, was deleted", when, k)
			}
		}
	}
}

// TestTakeNamesWhatChanged: a take after 1 % churn writes ledger rows in
// proportion to what changed, not to the tree, and claims only the keys
// its base does not hold; what it holds in full is every key it names.
func TestTakeNamesWhatChanged(t *testing.T) {
	f := newFixture(t)
	files := f.writeTree(2000)
	if err := f.take("snaaaaaaaaaaaa"); err != nil {
		t.Fatal(err)
	}
	treeKeys := len(f.named("snaaaaaaaaaaaa"))
	changed := f.churn(files, 7)
	f.runOutClaims()
	if err := f.take("snbbbbbbbbbbbb"); err != nil {
		t.Fatal(err)
	}
	names, drops := f.rows("snbbbbbbbbbbbb")
	// Each changed file is a new object named and an old one dropped; the
	// snapshot's manifest and label are new too, and its base's dropped.
	if names > changed+2 || drops > changed+2 || names+drops > treeKeys*3/100 {
		t.Fatalf("a take after %d of %d files changed wrote %d names and %d drops in the ledger; want about %d of each (the tree holds %d keys)",
			changed, len(files), names, drops, changed+2, treeKeys)
	}
	var claimed int
	if err := f.ledger.pool.QueryRow(f.ctx, `SELECT count(*) FROM content_objects WHERE claimed_until > now()`).Scan(&claimed); err != nil {
		t.Fatal(err)
	}
	if claimed > changed+2 {
		t.Fatalf("a take after %d files changed claimed %d keys; want only the %d its base does not hold", changed, claimed, changed+2)
	}
	full := f.named("snbbbbbbbbbbbb")
	if len(full) != treeKeys {
		t.Fatalf("the second snapshot holds %d keys in the ledger; the tree has %d", len(full), treeKeys)
	}
	f.keptWhole("after the incremental take", "snaaaaaaaaaaaa", "snbbbbbbbbbbbb")

	// After a restart the take lists its base's keys from the base's
	// manifest, and still names only what changed.
	var err error
	if f.b, err = local.New(local.Config{Root: f.b.Root(), Install: "in-test", NoSync: true,
		ContentStore: &ship.Remote{Objects: f.objs, Keys: f.cfg, Ledger: f.ledger}}); err != nil {
		t.Fatal(err)
	}
	changed = f.churn(files, 8)
	if err := f.take("sncccccccccccc"); err != nil {
		t.Fatal(err)
	}
	if names, drops := f.rows("sncccccccccccc"); names > changed+2 || drops > changed+2 {
		t.Fatalf("a take after a restart and %d files changed wrote %d names and %d drops; want about %d of each", changed, names, drops, changed+2)
	}
	f.keptWhole("after the incremental take after a restart", "snbbbbbbbbbbbb", "sncccccccccccc")
}

// TestDeletingABaseKeepsItsChild: a base deleted while a snapshot taken
// over it lives costs that snapshot nothing: after the sweep every object
// it holds is in the bucket, and it forks byte-exact on a second host.
func TestDeletingABaseKeepsItsChild(t *testing.T) {
	f := newFixture(t)
	files := f.writeTree(300)
	f.write("big.bin", 6<<20, 3)
	if err := f.take("snaaaaaaaaaaaa"); err != nil {
		t.Fatal(err)
	}
	f.churn(files, 3)
	f.write("new.bin", 300<<10, 9)
	if err := f.take("snbbbbbbbbbbbb"); err != nil {
		t.Fatal(err)
	}
	held := f.named("snbbbbbbbbbbbb")
	if err := f.deleteSnapshot("snaaaaaaaaaaaa"); err != nil {
		t.Fatal(err)
	}
	if freed := f.sweep(); freed == 0 {
		t.Fatal("a sweep after the base was deleted freed nothing; want what only the base held")
	}
	if after := f.named("snbbbbbbbbbbbb"); !slices.Equal(keys(after), keys(held)) {
		t.Fatalf("after its base was deleted the snapshot holds %d keys in the ledger; it held %d", len(after), len(held))
	}
	f.keptWhole("after the base was deleted and swept", "snbbbbbbbbbbbb")
	want := tree{}
	for rel, data := range files {
		want[rel] = data
	}
	want["big.bin"], _ = os.ReadFile(filepath.Join(f.b.BoxDir(f.g), "big.bin"))
	want["new.bin"], _ = os.ReadFile(filepath.Join(f.b.BoxDir(f.g), "new.bin"))
	f.forkElsewhere("snbbbbbbbbbbbb", want)
}

// TestDeletingChildThenBaseFreesAll: a snapshot and then its base
// deleted, the sweep frees every object, and the ledger records nothing.
func TestDeletingChildThenBaseFreesAll(t *testing.T) {
	f := newFixture(t)
	files := f.writeTree(300)
	if err := f.take("snaaaaaaaaaaaa"); err != nil {
		t.Fatal(err)
	}
	f.churn(files, 5)
	if err := f.take("snbbbbbbbbbbbb"); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"snbbbbbbbbbbbb", "snaaaaaaaaaaaa"} {
		if err := f.deleteSnapshot(id); err != nil {
			t.Fatal(err)
		}
	}
	f.sweep()
	if left := f.inBucket(); len(left) != 0 {
		t.Fatalf("after both snapshots were deleted and swept the bucket holds %d objects; want none", len(left))
	}
	var objects, records int
	if err := f.ledger.pool.QueryRow(f.ctx, `SELECT (SELECT count(*) FROM content_objects),
		(SELECT count(*) FROM content_snapshots) + (SELECT count(*) FROM content_names) + (SELECT count(*) FROM content_drops)`).Scan(&objects, &records); err != nil {
		t.Fatal(err)
	}
	if objects != 0 || records != 0 {
		t.Fatalf("after both snapshots were deleted the ledger records %d objects and %d snapshot rows; want none", objects, records)
	}
}

// TestKilledDeletesAndTakesFreeNothingNamed: a delete killed between any
// two steps of its hand-down, or a take killed between any two steps of
// its naming, never costs an object a ready snapshot holds, and each
// finishes when run again.
func TestKilledDeletesAndTakesFreeNothingNamed(t *testing.T) {
	f := newFixture(t)
	files := f.writeTree(200)
	ids := []string{"snaaaaaaaaaaaa", "snbbbbbbbbbbbb", "sncccccccccccc"}
	for i, id := range ids {
		f.churn(files, i)
		if err := f.take(id); err != nil {
			t.Fatal(err)
		}
	}
	heldA, held := f.named("snaaaaaaaaaaaa"), f.named("sncccccccccccc")
	steps := []string{"drops down", "names dropped", "names down", "drops named", "rebase", "unname", "forget drops", "forget", "commit"}
	for _, step := range steps {
		f.ledger.hooks.handDown = func(s string) error {
			if s == step {
				return errKilled
			}
			return nil
		}
		if err := f.deleteSnapshot("snbbbbbbbbbbbb"); !errors.Is(err, errKilled) {
			t.Fatalf("a delete killed at its hand-down's %q step answered %v", step, err)
		}
		f.ledger.hooks.handDown = nil
		f.sweep()
		f.keptKeys("after a delete killed at its hand-down's "+step+" step", heldA, held)
	}
	if err := f.deleteSnapshot("snbbbbbbbbbbbb"); err != nil {
		t.Fatalf("the killed delete, run again: %v", err)
	}
	f.sweep()
	f.keptKeys("after the killed delete finished", heldA, held)
	if after := f.named("sncccccccccccc"); !slices.Equal(keys(after), keys(held)) {
		t.Fatalf("after its base was deleted the snapshot holds %d keys in the ledger; it held %d", len(after), len(held))
	}

	// A take over its base killed while it puts.
	f.churn(files, 9)
	f.objs.kill(1)
	if err := f.take("snkilledputs00"); err == nil {
		t.Fatal("a take killed while it put answered ready")
	}
	f.objs.kill(0)
	f.sweep()
	f.keptKeys("after a take over its base was killed while it put", heldA, held)
	if err := f.take("snkilledputs00"); err != nil {
		t.Fatalf("the take killed while it put, taken again: %v", err)
	}
	f.keptWhole("after the take killed while it put was taken again", "snkilledputs00")

	for i, step := range []string{"base", "names", "drops", "commit"} {
		id := fmt.Sprintf("snkilled%06d", i)
		f.churn(files, 10+i)
		f.ledger.hooks.naming = func(s string) error {
			if s == step {
				return errKilled
			}
			return nil
		}
		if err := f.take(id); !errors.Is(err, errKilled) {
			t.Fatalf("a take killed at its naming's %q step answered %v", step, err)
		}
		f.ledger.hooks.naming = nil
		f.sweep()
		f.keptKeys("after a take killed at its naming's "+step+" step", heldA, held)
		if err := f.take(id); err != nil {
			t.Fatalf("the take killed at its naming's %q step, taken again: %v", step, err)
		}
		f.keptWhole("after the killed take was taken again", id)
		f.keptKeys("after the killed take was taken again", heldA, held)
	}
}

// TestBaseDeletedWhileATakeShips: the base a take ships over is deleted,
// and a sweep killed after its bucket deletes frees what only the base
// named, before the take names its objects: the take finds its base gone,
// claims and puts again what it holds, and forks byte-exact elsewhere.
func TestBaseDeletedWhileATakeShips(t *testing.T) {
	f := newFixture(t)
	files := f.writeTree(200)
	if err := f.take("snaaaaaaaaaaaa"); err != nil {
		t.Fatal(err)
	}
	f.churn(files, 1)
	if err := f.take("snbbbbbbbbbbbb"); err != nil {
		t.Fatal(err)
	}
	f.churn(files, 2)
	deleted := false
	f.ledger.hooks.naming = func(step string) error {
		if step != "base" || deleted {
			return nil
		}
		deleted = true
		if err := f.deleteSnapshot("snbbbbbbbbbbbb"); err != nil {
			return err
		}
		f.runOutClaims()
		f.ledger.hooks.deleted = func() error { return errKilled }
		defer func() { f.ledger.hooks.deleted = nil }()
		if _, err := f.ledger.Sweep(f.ctx, f.bucket); !errors.Is(err, errKilled) {
			return fmt.Errorf("the killed sweep answered %v", err)
		}
		return nil
	}
	start := time.Now()
	if err := f.take("sncccccccccccc"); err != nil {
		t.Fatalf("a take whose base was deleted while it shipped: %v", err)
	}
	if !deleted {
		t.Fatalf("the base was never deleted during the take (%v)", time.Since(start))
	}
	f.ledger.hooks.naming = nil
	f.sweep()
	f.keptWhole("after the take's base was deleted while it shipped", "snaaaaaaaaaaaa", "sncccccccccccc")
	f.forkElsewhere("sncccccccccccc", files)
}
