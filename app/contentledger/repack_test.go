package contentledger

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/local"
	"github.com/boxsnap/boxsnap/providers/local/objstore"
	"github.com/boxsnap/boxsnap/providers/local/ship"
)

var _ Repacker = (*ship.Repacker)(nil)

// repacker is the fixture's bucket as the sweep's Repacker, as boot
// passes it.
func (f *fixture) repacker() *ship.Repacker {
	return &ship.Repacker{Objects: f.objs, Keys: f.cfg}
}

// churnRound writes round's files in the box: three kept for good, and a
// hundred of about 30 KB that the next round removes. Each file's size is
// its own, so no two share content.
func (f *fixture) churnRound(round int) {
	if err := os.RemoveAll(filepath.Join(f.b.BoxDir(f.g), fmt.Sprintf("churn%d", round-1))); err != nil {
		f.t.Fatal(err)
	}
	for i := range 3 {
		f.write(fmt.Sprintf("keep%d/%d.txt", round, i), 5000+round*101+i, byte(200+round))
	}
	for i := range 100 {
		f.write(fmt.Sprintf("churn%d/%03d.bin", round, i), 30000+i*97+round*13, byte(round*40+i%40))
	}
}

// churnSnapshots takes a snapshot after each of rounds rounds of churn and
// deletes all but those keep lists: each deleted one leaves its pack
// holding only its kept files. It answers the tree each kept snapshot
// holds.
func (f *fixture) churnSnapshots(rounds int, keep ...int) map[string]map[string][32]byte {
	f.t.Helper()
	trees := map[string]map[string][32]byte{}
	for round := range rounds {
		f.churnRound(round)
		id := fmt.Sprintf("snchurn%07d", round)
		if err := f.take(id); err != nil {
			f.t.Fatal(err)
		}
		trees[id] = sumsOf(f.t, f.b.BoxDir(f.g))
	}
	for round := range rounds {
		id := fmt.Sprintf("snchurn%07d", round)
		if !contains(keep, round) {
			if err := f.deleteSnapshot(id); err != nil {
				f.t.Fatal(err)
			}
			delete(trees, id)
		}
	}
	return trees
}

func contains(xs []int, x int) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// packBytes is how many bytes the packs in the bucket hold (listed by the
// test only), and how many packs there are.
func (f *fixture) packBytes() (bytes int64, packs int) {
	f.t.Helper()
	for k := range f.inBucket() {
		if !strings.HasPrefix(k, f.cfg.Prefix+"packs/") {
			continue
		}
		n, ok, err := f.bucket.Head(f.ctx, k)
		if err != nil || !ok {
			f.t.Fatalf("head pack %s: %v", k, err)
		}
		bytes += n
		packs++
	}
	return bytes, packs
}

// liveBytes is how many bytes the objects the ready snapshots name hold
// in packs.
func (f *fixture) liveBytes(ready ...string) int64 {
	f.t.Helper()
	var live int64
	err := f.ledger.Locate(f.ctx, keys(f.named(ready...)), func(_, _ string, _, n, _ int64) { live += n })
	if err != nil {
		f.t.Fatal(err)
	}
	return live
}

// restoresExact forks each ready snapshot on a second host (its own
// empty folder, the same database and bucket) and fails the test unless
// it holds its tree byte-exact.
func (f *fixture) restoresExact(when string, trees map[string]map[string][32]byte) {
	f.t.Helper()
	for id, want := range trees {
		other, _ := f.otherHost()
		g, err := other.ForkSnapshot(f.ctx, providers.SnapshotRef{Ref: id, ID: id},
			providers.BoxIdentity{ID: "bxother" + id[len(id)-7:], Kind: "linux"}, nil)
		if err != nil {
			f.t.Fatalf("%s: snapshot %s forked on a second host: %v", when, id, err)
		}
		got := sumsOf(f.t, other.BoxDir(g))
		if len(got) != len(want) {
			f.t.Fatalf("%s: snapshot %s forked on a second host holds %d files, want %d", when, id, len(got), len(want))
		}
		for rel, sum := range want {
			if got[rel] != sum {
				f.t.Fatalf("%s: snapshot %s forked on a second host: %s is not byte-exact", when, id, rel)
			}
		}
	}
}

// readyIDs is the trees' snapshot ids.
func readyIDs(trees map[string]map[string][32]byte) []string {
	var out []string
	for id := range trees {
		out = append(out, id)
	}
	return out
}

// nothingUnnamedLeft fails the test unless every pack in the bucket holds
// an object a ready snapshot names, and the ledger records no object that
// nothing names.
func (f *fixture) nothingUnnamedLeft(when string, ready ...string) {
	f.t.Helper()
	holding := map[string]bool{}
	if err := f.ledger.Locate(f.ctx, keys(f.named(ready...)), func(_, pack string, _, _, _ int64) { holding[pack] = true }); err != nil {
		f.t.Fatal(err)
	}
	for k := range f.inBucket() {
		if strings.HasPrefix(k, f.cfg.Prefix+"packs/") && !holding[k] {
			f.t.Fatalf("%s: pack %s holds nothing a ready snapshot names", when, k)
		}
	}
	if _, unnamed, err := f.ledger.Counts(f.ctx); err != nil || unnamed != 0 {
		f.t.Fatalf("%s: the ledger records %d objects nothing names (%v)", when, unnamed, err)
	}
}

// TestRepackFreesTheBucketsRoom: after churn leaves packs mostly freed
// (each holds three kept files of a hundred), the sweep repacks them, so
// after the grace the packs in the bucket hold at most twice the live
// bytes (no pack is left under half live), not the churn's; and every
// ready snapshot restores on another host byte-exact.
func TestRepackFreesTheBucketsRoom(t *testing.T) {
	f := newPackFixture(t)
	trees := f.churnSnapshots(6, 2, 5)
	ready := readyIDs(trees)

	// The sweep as before repacks: only the packs nothing lies in go.
	f.runOutAllClaims()
	if _, err := f.ledger.Sweep(f.ctx, f.bucket); err != nil {
		t.Fatal(err)
	}
	before, packsBefore := f.packBytes()
	live := f.liveBytes(ready...)
	if before <= 2*live {
		t.Fatalf("the churn left %d bytes in packs for %d live; the test needs packs mostly freed", before, live)
	}

	start := time.Now()
	if _, err := f.ledger.Sweep(f.ctx, f.repacker()); err != nil {
		t.Fatalf("the sweep that repacks: %v", err)
	}
	took := time.Since(start)
	f.keptWhole("after the repack, within the grace", ready...)
	f.restoresExact("after the repack, within the grace", trees)

	f.runOutAllClaims()
	if _, err := f.ledger.Sweep(f.ctx, f.repacker()); err != nil {
		t.Fatal(err)
	}
	after, packsAfter := f.packBytes()
	t.Logf("packs in the bucket: %d, %d bytes before the repack; %d, %d bytes after; %d live bytes; the sweep that repacked took %v",
		packsBefore, before, packsAfter, after, live, took)
	// Each pack left holds at least half its bytes live, its index aside.
	if bound := 2*live + int64(packsAfter)*64<<10; after > bound {
		t.Fatalf("after the repack and the grace the packs hold %d bytes for %d live; want at most %d", after, live, bound)
	}
	f.keptWhole("after the old packs were freed", ready...)
	f.nothingUnnamedLeft("after the old packs were freed", ready...)
	f.restoresExact("after the old packs were freed", trees)
}

// TestRepackKilledAtEveryStep: a repack killed at each of its steps (after
// the new pack's claim, after its put, in the transaction that moves the
// objects, after that commits, and while the sweep deletes the old packs)
// never leaves an object a ready snapshot names unreadable, and once the
// claims and the grace ran out, the next sweeps leave nothing that nothing
// names.
func TestRepackKilledAtEveryStep(t *testing.T) {
	for _, step := range []string{"claimed", "put", "moved", "committed", "deleting"} {
		t.Run(step, func(t *testing.T) {
			f := newPackFixture(t)
			trees := f.churnSnapshots(3, 2)
			ready := readyIDs(trees)
			f.runOutAllClaims()
			if step == "deleting" {
				if _, err := f.ledger.Sweep(f.ctx, f.repacker()); err != nil {
					t.Fatal(err)
				}
				f.runOutAllClaims()
				f.ledger.hooks.deletedPacks = func() error { return errKilled }
			} else {
				f.ledger.hooks.repacking = func(s string) error {
					if s == step {
						return errKilled
					}
					return nil
				}
			}
			if _, err := f.ledger.Sweep(f.ctx, f.repacker()); !errors.Is(err, errKilled) {
				t.Fatalf("the sweep killed at %s answered %v", step, err)
			}
			f.ledger.hooks.repacking, f.ledger.hooks.deletedPacks = nil, nil
			f.keptWhole("after the repack was killed at "+step, ready...)
			f.restoresExact("after the repack was killed at "+step, trees)

			for range 2 {
				f.runOutAllClaims()
				if _, err := f.ledger.Sweep(f.ctx, f.repacker()); err != nil {
					t.Fatalf("a sweep after the one killed at %s: %v", step, err)
				}
				f.keptWhole("after a sweep after the one killed at "+step, ready...)
			}
			f.nothingUnnamedLeft("after the sweeps after the one killed at "+step, ready...)
			f.restoresExact("after the sweeps after the one killed at "+step, trees)
		})
	}
}

// held is the real bucket, whose ranged GETs wait until released: a fetch
// that located its objects and has not read them yet.
type held struct {
	*objstore.Bucket
	located chan struct{}
	release chan struct{}
	once    sync.Once
	mu      sync.Mutex
	packs   map[string]bool
}

func (h *held) GetRange(ctx context.Context, key string, off, n int64, w io.Writer) error {
	h.mu.Lock()
	h.packs[key] = true
	h.mu.Unlock()
	h.once.Do(func() { close(h.located) })
	select {
	case <-h.release:
	case <-ctx.Done():
		return ctx.Err()
	}
	return h.Bucket.GetRange(ctx, key, off, n, w)
}

// TestRestoreRacingARepackReadsEveryObject: a fork on another host that
// located its objects in a pack just before a repack moved them, and
// reads them after the move and another sweep, reads every object: the
// old pack is kept for the grace.
func TestRestoreRacingARepackReadsEveryObject(t *testing.T) {
	f := newPackFixture(t)
	trees := f.churnSnapshots(3, 2)
	id := "snchurn0000002"
	f.runOutAllClaims()
	if _, err := f.ledger.Sweep(f.ctx, f.bucket); err != nil {
		t.Fatal(err)
	}
	// The packs the fork will read from, before the repack.
	before := map[string]bool{}
	if err := f.ledger.Locate(f.ctx, keys(f.named(id)), func(_, pack string, _, _, _ int64) { before[pack] = true }); err != nil {
		t.Fatal(err)
	}

	h := &held{Bucket: f.bucket, located: make(chan struct{}), release: make(chan struct{}), packs: map[string]bool{}}
	other, err := local.New(local.Config{Root: t.TempDir(), Install: "in-test", NoSync: true,
		ContentStore: &ship.Remote{Objects: h, Keys: f.cfg, Ledger: f.ledger}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = local.UnmountAll(other.Root()) })
	type forked struct {
		g   providers.Guest
		err error
	}
	done := make(chan forked, 1)
	go func() {
		g, err := other.ForkSnapshot(f.ctx, providers.SnapshotRef{Ref: id, ID: id},
			providers.BoxIdentity{ID: "bxracingrepack", Kind: "linux"}, nil)
		done <- forked{g, err}
	}()
	select {
	case <-h.located:
	case r := <-done:
		t.Fatalf("the fork on the other host ended before it read a pack: %v", r.err)
	}

	// The repack moves the objects while the fork waits to read them, and
	// a sweep after it deletes what it may.
	for range 2 {
		if _, err := f.ledger.Sweep(f.ctx, f.repacker()); err != nil {
			t.Fatalf("the sweep that repacks: %v", err)
		}
	}
	moved := false
	if err := f.ledger.Locate(f.ctx, keys(f.named(id)), func(_, pack string, _, _, _ int64) { moved = moved || !before[pack] }); err != nil {
		t.Fatal(err)
	}
	if !moved {
		t.Fatal("the repack moved none of the snapshot's objects; the test needs it to")
	}
	close(h.release)
	r := <-done
	if r.err != nil {
		t.Fatalf("the fork that located its objects before the repack: %v", r.err)
	}
	want := trees[id]
	got := sumsOf(t, other.BoxDir(r.g))
	if len(got) != len(want) {
		t.Fatalf("the fork holds %d files, want %d", len(got), len(want))
	}
	for rel, sum := range want {
		if got[rel] != sum {
			t.Fatalf("the fork that raced the repack: %s is not byte-exact", rel)
		}
	}
	read := 0
	for p := range h.packs {
		if before[p] {
			read++
		}
	}
	if read != len(h.packs) {
		t.Fatalf("the fork read %d packs, %d of them where the objects lay before the repack; want all", len(h.packs), read)
	}
}

// TestRepackChecksEachObjectByItsHash: an object whose bytes in a mostly
// freed pack do not match its hash is never carried into a new pack: the
// sweep says so, that pack stays where it is with its objects, and the
// other mostly freed packs are repacked all the same.
func TestRepackChecksEachObjectByItsHash(t *testing.T) {
	f := newPackFixture(t)
	trees := f.churnSnapshots(6, 5)
	ready := readyIDs(trees)
	f.runOutAllClaims()
	if _, err := f.ledger.Sweep(f.ctx, f.bucket); err != nil {
		t.Fatal(err)
	}
	// Flip a byte of a kept file of the first round, in its pack.
	orig, err := os.ReadFile(filepath.Join(f.b.BoxDir(f.g), "keep0/0.txt"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(orig)
	bad := f.cfg.ContentKey(hex.EncodeToString(sum[:]))
	pack := f.spoilInPack(t, bad, "keep0/0.txt")
	packOf := func() map[string]string {
		out := map[string]string{}
		if err := f.ledger.Locate(f.ctx, keys(f.named(ready...)), func(k, p string, _, _, _ int64) { out[k] = p }); err != nil {
			t.Fatal(err)
		}
		return out
	}
	was := packOf()

	_, err = f.ledger.Sweep(f.ctx, f.repacker())
	if !errors.Is(err, objstore.ErrCorrupt) || !strings.Contains(err.Error(), "does not match its hash") {
		t.Fatalf("the sweep that repacked a pack holding a corrupt object answered %v; want it said", err)
	}
	now := packOf()
	movedOthers := false
	for k, p := range now {
		if was[k] == pack && p != pack {
			t.Fatalf("object %s was moved out of the pack that holds a corrupt object", k)
		}
		movedOthers = movedOthers || (was[k] != pack && p != was[k])
	}
	if !movedOthers {
		t.Fatal("the other mostly freed packs were not repacked")
	}
	f.runOutAllClaims()
	if _, err := f.ledger.Sweep(f.ctx, f.repacker()); !errors.Is(err, objstore.ErrCorrupt) {
		t.Fatalf("the next sweep answered %v; want the corrupt object said again", err)
	}
	f.keptWhole("after the sweeps", ready...)
	if !f.inBucket()[pack] {
		t.Fatal("the pack holding a corrupt object was deleted")
	}
}

// packDifferences is every sentence saying how the ledger's record of a
// pack differs from the pack's own index in the bucket, and how many
// packs were checked.
func (f *fixture) packDifferences() (diffs []string, packs int) {
	f.t.Helper()
	r := f.repacker()
	err := f.ledger.EachPack(f.ctx, func(pack string, size int64, keys []string, offs, lens []int64) error {
		d, err := r.CheckPack(f.ctx, ship.PackRecord{Key: pack, Size: size, Keys: keys, Offs: offs, Lens: lens})
		diffs, packs = append(diffs, d...), packs+1
		return err
	})
	if err != nil {
		f.t.Fatal(err)
	}
	return diffs, packs
}

// TestPackIndexesAgreeWithTheLedger: every pack, a take's or a repack's,
// ends in its own index, so where the ledger records each object can be
// checked against the bucket pack by pack (never by listing it); an
// object the ledger places elsewhere, and a pack gone from the bucket,
// are said.
func TestPackIndexesAgreeWithTheLedger(t *testing.T) {
	f := newPackFixture(t)
	trees := f.churnSnapshots(3, 2)
	ready := readyIDs(trees)
	f.runOutAllClaims()
	if _, err := f.ledger.Sweep(f.ctx, f.repacker()); err != nil {
		t.Fatal(err)
	}
	f.runOutAllClaims()
	if _, err := f.ledger.Sweep(f.ctx, f.repacker()); err != nil {
		t.Fatal(err)
	}
	if diffs, packs := f.packDifferences(); len(diffs) != 0 || packs < 2 {
		t.Fatalf("after takes and a repack, %d packs checked; the ledger differs from their indexes: %v", packs, diffs)
	}

	// The ledger places one object a byte further than its pack says.
	named := keys(f.named(ready...))
	var moved, pack string
	if err := f.ledger.Locate(f.ctx, named, func(k, p string, _, n, _ int64) {
		if moved == "" && n > 0 {
			moved, pack = k, p
		}
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.ledger.pool.Exec(f.ctx, `UPDATE content_objects SET pack_offset = pack_offset + 1 WHERE key = $1`, moved); err != nil {
		t.Fatal(err)
	}
	sum, _ := f.cfg.ContentHash(moved)
	diffs, _ := f.packDifferences()
	if len(diffs) != 1 || !strings.Contains(diffs[0], sum) || !strings.Contains(diffs[0], "not by the pack's own index") {
		t.Fatalf("with one object placed a byte off, the check said %v", diffs)
	}
	if _, err := f.ledger.pool.Exec(f.ctx, `UPDATE content_objects SET pack_offset = pack_offset - 1 WHERE key = $1`, moved); err != nil {
		t.Fatal(err)
	}

	// A pack gone from the bucket.
	if err := f.bucket.Delete(f.ctx, pack); err != nil {
		t.Fatal(err)
	}
	diffs, _ = f.packDifferences()
	if len(diffs) != 1 || !strings.Contains(diffs[0], pack) || !strings.Contains(diffs[0], "is not in the bucket, yet the ledger records objects in it") {
		t.Fatalf("with a pack gone from the bucket, the check said %v", diffs)
	}
}

// TestRepackRunsOnOneProcessAtATime: while one process repacks (stopped
// after its new pack's put), a sweep on another process repacks nothing
// (it makes no pack of its own for the same objects), and what the first
// then records leaves every ready snapshot whole.
func TestRepackRunsOnOneProcessAtATime(t *testing.T) {
	f := newPackFixture(t)
	trees := f.churnSnapshots(4, 1, 3)
	ready := readyIDs(trees)
	f.runOutAllClaims()
	if _, err := f.ledger.Sweep(f.ctx, f.bucket); err != nil {
		t.Fatal(err)
	}
	packsNow := func() int {
		var n int
		if err := f.ledger.pool.QueryRow(f.ctx, `SELECT count(*) FROM content_packs`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := packsNow()

	first := New(f.ledger.pool)
	put, resume := make(chan struct{}), make(chan struct{})
	first.hooks.repacking = func(step string) error {
		if step == "put" {
			close(put)
			<-resume
		}
		return nil
	}
	done := make(chan error, 1)
	go func() {
		_, err := first.Sweep(f.ctx, f.repacker())
		done <- err
	}()
	select {
	case <-put:
	case err := <-done:
		t.Fatalf("the first process's sweep ended before its repack put a pack: %v", err)
	}
	second := New(f.ledger.pool)
	if _, err := second.Sweep(f.ctx, f.repacker()); err != nil {
		t.Fatalf("the second process's sweep: %v", err)
	}
	if got := packsNow(); got != before+1 {
		t.Fatalf("while one process repacked, another's sweep left %d packs recorded, want %d (the first's new one alone)", got, before+1)
	}
	close(resume)
	if err := <-done; err != nil {
		t.Fatalf("the first process's sweep: %v", err)
	}
	f.keptWhole("after the repack on one process", ready...)
	f.runOutAllClaims()
	if _, err := second.Sweep(f.ctx, f.repacker()); err != nil {
		t.Fatal(err)
	}
	f.nothingUnnamedLeft("after the grace", ready...)
	f.restoresExact("after the grace", trees)
}
