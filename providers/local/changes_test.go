package local

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/boxsnap/boxsnap/providers"
)

// TestChangesFromTheJournal: a running box's check answers from its change
// journal, reading no folder (Walked false) once a take set the journal's
// base; a check after boxsnap's restart walks once and, finding nothing
// changed, starts the journal from the last take again, so the next check
// is free; a stopped box answers what its journal said as it stopped.
func TestChangesFromTheJournal(t *testing.T) {
	e := setupJournal(t, t.TempDir(), Config{})
	check := func(want providers.Changed, walked bool, running bool) {
		t.Helper()
		ch, err := e.b.Changes(e.ctx, e.g)
		if err != nil {
			t.Fatalf("Changes: %v", err)
		}
		if ch.Changed != want || ch.Walked != walked || ch.Running != running || !ch.Exists {
			t.Fatalf("Changes = %+v, want changed %s, walked %v, running %v", ch, want, walked, running)
		}
	}
	write := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(e.dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a.txt", "one")
	e.take(t)
	e.take(t) // the first take walked (the journal started after none); the second rebased it
	check(providers.ChangedNo, false, true)
	check(providers.ChangedNo, false, true)
	write("a.txt", "two")
	check(providers.ChangedYes, false, true)
	e.take(t)
	check(providers.ChangedNo, false, true)

	// As after boxsnap's restart: the journal lost its record. The check
	// walks once, finds nothing changed, and the next reads no folder.
	e.b.EndJournal(e.g.Ref)
	e.b.StartJournal(e.g.Ref, e.dir)
	check(providers.ChangedNo, true, true)
	check(providers.ChangedNo, false, true)
	write("b.txt", "new")
	check(providers.ChangedYes, false, true)

	// A box that stops says what its journal said as it stopped.
	if err := e.b.Stop(e.ctx, e.g); err != nil {
		t.Fatal(err)
	}
	check(providers.ChangedYes, false, false)
	if err := e.b.Start(e.ctx, e.g); err != nil {
		t.Fatal(err)
	}
	e.take(t) // walks: the journal started after the last take
	e.take(t)
	if err := e.b.Stop(e.ctx, e.g); err != nil {
		t.Fatal(err)
	}
	check(providers.ChangedNo, false, false)
}

// TestChangesOfAStoppedRestoredBoxCountFromTheRestore: a stopped box
// restored to an older snapshot answers, with no journal watching, what
// changed since that restore (nothing, then the file written after it),
// not what the restore itself changed against the last take, nor the
// access file its last step wrote.
func TestChangesOfAStoppedRestoredBoxCountFromTheRestore(t *testing.T) {
	e := setupJournal(t, t.TempDir(), Config{})
	e.write(t, "a.txt", "one")
	_, old := e.take(t)
	e.write(t, "a.txt", "two")
	e.write(t, "b.txt", "new")
	e.take(t)
	if err := e.b.Stop(e.ctx, e.g); err != nil {
		t.Fatal(err)
	}
	if err := e.restore(t, old); err != nil {
		t.Fatalf("restore: %v", err)
	}
	if running, _ := e.b.running(e.g.Ref); running {
		t.Fatal("the restore of a stopped box started it")
	}
	// The restore's last step writes the access file: boxsnap's own, no
	// change of the box's.
	if _, err := e.b.SetStraight(e.ctx, e.g, providers.Access{Box: providers.BoxIdentity{ID: e.g.Ref, Name: "calm-moss", Install: "in-test"}}); err != nil {
		t.Fatalf("SetStraight: %v", err)
	}
	check := func(paths int) {
		t.Helper()
		ch, err := e.b.Changes(e.ctx, e.g)
		if err != nil {
			t.Fatalf("Changes: %v", err)
		}
		if !ch.Restored || !ch.RestoredKnown || ch.Paths != paths || ch.Changed != providers.ChangedYes {
			t.Fatalf("Changes = %+v, want restored (known), %d paths since the restore, changed against the last take", ch, paths)
		}
	}
	check(0)
	e.write(t, "c.txt", "after the restore")
	check(1)
}
