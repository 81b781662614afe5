package heads_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/heads"
	"github.com/boxsnap/boxsnap/app/snapshots/take"
	"github.com/boxsnap/boxsnap/providers"
)

// TestHeadSetWithoutRestore follows microsandbox's explicit selection: the
// person chooses any ready snapshot of a box as its head, an older one
// too, without a restore: nothing in the box changes, the box log says so,
// and the next take is taken from the chosen one. The thread's own agent
// may choose too; another thread's agent reads the snapshot as a made-up
// name does.
func TestHeadSetWithoutRestore(t *testing.T) {
	t.Parallel()
	e := coretest.New(t, coretest.Options{})
	ctx := context.Background()
	_, agent, _ := e.Thread(t, "Heads")
	b := e.Box(t, agent, "birch-wren")
	file := filepath.Join(e.Local.BoxDir(providers.Guest{Ref: b.GuestRef}), "a.txt")
	write := func(s string) {
		t.Helper()
		if err := os.WriteFile(file, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	take := func(c snapshots.Caller, name string) *snapshots.Snapshot {
		t.Helper()
		op, sn, err := e.Take.Take(ctx, c, take.TakeRequest{Box: b.Name, Name: name})
		if err != nil {
			t.Fatal(err)
		}
		if got := e.Wait(t, op); got.State != snapshots.OpDone {
			t.Fatalf("take %s: %s %s", name, got.State, coretest.Deref(got.Error))
		}
		sn, _, err = e.Core.Snapshot(ctx, snapshots.Owner(), sn.ID)
		if err != nil {
			t.Fatal(err)
		}
		return sn
	}
	head := func() string {
		t.Helper()
		l, err := e.Heads.BoxLineage(ctx, snapshots.Owner(), b.Name)
		if err != nil {
			t.Fatal(err)
		}
		if l.Head == nil {
			return ""
		}
		return l.Head.ID
	}

	write("one")
	cp01 := take(agent, "cp01")
	write("two")
	cp02 := take(agent, "cp02")
	if head() != cp02.ID {
		t.Fatalf("after two takes the head is %q, want cp02 %s", head(), cp02.ID)
	}

	// The person rewinds the head to cp01, by name: no restore runs and
	// the box keeps its files.
	sn, err := e.Heads.ChooseHead(ctx, snapshots.Owner(), b.Name, "cp01")
	if err != nil {
		t.Fatal(err)
	}
	if sn.ID != cp01.ID || head() != cp01.ID {
		t.Fatalf("chose cp01: answered %s, head %q, want %s", sn.ID, head(), cp01.ID)
	}
	if got, _ := os.ReadFile(file); string(got) != "two" {
		t.Fatalf("choosing the head changed the box: it holds %q", got)
	}
	log, err := e.Boxes.BoxLog(ctx, snapshots.Owner(), b.Name, 20)
	if err != nil {
		t.Fatal(err)
	}
	if len(log) == 0 || log[0].Kind != heads.EvHeadSet || log[0].Words != "the head is now ‘cp01’ ("+cp01.ID+")" {
		t.Fatalf("the box log's newest event is %+v, want head-set naming cp01", log[0])
	}
	for _, ev := range log {
		if ev.Kind == snapshots.EvRestored {
			t.Fatalf("choosing the head logged a restore: %+v", ev)
		}
	}
	// The next take is taken from the chosen head: a sibling of cp02.
	write("three")
	exp := take(agent, "experiment")
	if exp.ParentID == nil || *exp.ParentID != cp01.ID || head() != exp.ID {
		t.Fatalf("the take after choosing cp01: parent %q head %q, want parent %s and head %s", coretest.Deref(exp.ParentID), head(), cp01.ID, exp.ID)
	}

	// The thread's own agent chooses the other branch, by ID.
	if _, err := e.Heads.ChooseHead(ctx, agent, b.Name, cp02.ID); err != nil || head() != cp02.ID {
		t.Fatalf("the agent chose cp02: %v, head %q", err, head())
	}
	// Choosing it again changes nothing, and logs nothing more.
	before, _ := e.Boxes.BoxLog(ctx, snapshots.Owner(), b.Name, 50)
	if _, err := e.Heads.ChooseHead(ctx, agent, b.Name, cp02.ID); err != nil {
		t.Fatal(err)
	}
	if after, _ := e.Boxes.BoxLog(ctx, snapshots.Owner(), b.Name, 50); len(after) != len(before) {
		t.Fatalf("choosing the same head again logged %d events", len(after)-len(before))
	}

	// Another thread's agent: the snapshot, by ID and by name, reads as a
	// made-up one, and the head stays.
	_, other, _ := e.Thread(t, "Another")
	madeUp := snapshots.NewID(snapshots.PrefixSnapshot)
	_, want := e.Heads.ChooseHead(ctx, other, "", madeUp)
	wantRefusal, ok := snapshots.AsRefusal(want)
	if !ok || wantRefusal.Code != snapshots.CodeNotFound {
		t.Fatalf("a made-up snapshot: %v", want)
	}
	_, err = e.Heads.ChooseHead(ctx, other, "", cp01.ID)
	if r, ok := snapshots.AsRefusal(err); !ok || r.Code != wantRefusal.Code || r.Words != snapshots.SnapshotNotFound(cp01.ID).Words {
		t.Fatalf("another thread chose cp01: %v, want %q", err, snapshots.SnapshotNotFound(cp01.ID).Words)
	}
	if _, err := e.Heads.ChooseHead(ctx, other, b.Name, "cp01"); err == nil {
		t.Fatal("another thread chose cp01 by its box and name")
	} else if r, ok := snapshots.AsRefusal(err); !ok || r.Code != snapshots.CodeNotFound {
		t.Fatalf("another thread chose cp01 by name: %v, want not found", err)
	}
	if head() != cp02.ID {
		t.Fatalf("a refused choice moved the head to %q", head())
	}
	// A made-up name on the box is refused in words, and changes nothing.
	if _, err := e.Heads.ChooseHead(ctx, snapshots.Owner(), b.Name, "no-such"); err == nil {
		t.Fatal("a made-up name became the head")
	}
	if head() != cp02.ID {
		t.Fatalf("a made-up name moved the head to %q", head())
	}
}
