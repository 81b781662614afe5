package snapshots_test

import (
	"testing"
	"time"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

// TestMayActTable is the permission table, row by row: for each kind of box
// (or a kept snapshot), each column (Take, See, Restore, Fork, Delete, Keep)
// and each caller, whether MayAct lets it. "form" is the middle row's Restore
// for its agent: MayAct lets the agent ask, and the restore's own rule turns
// it into a request for the person's word.
func TestMayActTable(t *testing.T) {
	t.Parallel()
	const thread, other = "th_its", "th_other"
	kept := time.Now().Add(30 * 24 * time.Hour)
	ptr := func(s string) *string { return &s }

	// The boxes of the table's rows.
	ownBox := func() *snapshots.Box { // a thread's box that the thread does not run on
		return &snapshots.Box{ID: "bx_own", Name: "amber-fox", ThreadID: ptr(thread), State: "ready"}
	}
	runsOn := func() *snapshots.Box { // the box a thread runs on, one of the person's machines
		return &snapshots.Box{ID: "bx_runs", Name: "dev-desk", State: "ready",
			Presence: snapshots.Presence{Workspaces: []snapshots.Workspace{{Thread: thread, RunsOn: true}}}}
	}
	released := func() *snapshots.Box {
		b := ownBox()
		b.State, b.ReleasedAt = "released", &kept
		return b
	}

	// The snapshots a cell speaks of.
	tookIt := func(b *snapshots.Box) *snapshots.Snapshot { // an agent of its thread took it, nobody kept it
		return &snapshots.Snapshot{ID: "sn_took", Name: "before the upgrade", BoxID: b.ID, ByKind: "agent", ByThreadID: ptr(thread),
			OwnerKind: "thread", OwnerThreadID: ptr(thread)}
	}
	otherTook := func(b *snapshots.Box) *snapshots.Snapshot { // another thread's agent took it
		return &snapshots.Snapshot{ID: "sn_other", Name: "theirs", BoxID: b.ID, ByKind: "agent", ByThreadID: ptr(other),
			OwnerKind: "thread", OwnerThreadID: ptr(other)}
	}
	personTook := func(b *snapshots.Box) *snapshots.Snapshot { // the person took it
		return &snapshots.Snapshot{ID: "sn_person", Name: "mine", BoxID: b.ID, ByKind: "person", OwnerKind: "thread", OwnerThreadID: ptr(thread)}
	}
	keptOne := func(b *snapshots.Box) *snapshots.Snapshot { // an agent took it, the person kept it
		s := tookIt(b)
		s.KeptUntil = &kept
		return s
	}
	none := func(*snapshots.Box) *snapshots.Snapshot { return nil } // Take has no snapshot

	agent, person, cli, stranger := snapshots.Agent(thread), snapshots.Owner(), snapshots.CLI(), snapshots.Agent(other)
	type cell struct {
		row    string
		box    func() *snapshots.Box
		column snapshots.Action
		what   func(*snapshots.Box) *snapshots.Snapshot
		who    snapshots.Caller
		may    string // "yes", "no" or "form"
	}
	table := []cell{
		// A thread's box that the thread does not run on. Owner of its
		// snapshots: the thread.
		{"own box", ownBox, snapshots.ActTake, none, agent, "yes"},          // its agent
		{"own box", ownBox, snapshots.ActTake, none, person, "yes"},         // the person
		{"own box", ownBox, snapshots.ActTake, none, stranger, "no"},        // no other thread
		{"own box", ownBox, snapshots.ActSee, tookIt, agent, "yes"},         // its agent
		{"own box", ownBox, snapshots.ActSee, personTook, agent, "yes"},     // its agent: its thread's snapshots
		{"own box", ownBox, snapshots.ActSee, otherTook, agent, "no"},       // no thread sees another's
		{"own box", ownBox, snapshots.ActSee, tookIt, stranger, "no"},       // nor another thread's box
		{"own box", ownBox, snapshots.ActSee, otherTook, person, "yes"},     // the person
		{"own box", ownBox, snapshots.ActRestore, tookIt, agent, "yes"},     // its agent, without asking, with an undo
		{"own box", ownBox, snapshots.ActRestore, personTook, agent, "yes"}, // any of its thread's snapshots
		{"own box", ownBox, snapshots.ActRestore, tookIt, person, "yes"},    // the person
		{"own box", ownBox, snapshots.ActRestore, tookIt, stranger, "no"},
		{"own box", ownBox, snapshots.ActFork, tookIt, agent, "yes"},        // its agent, into its thread
		{"own box", ownBox, snapshots.ActFork, tookIt, person, "yes"},       // the person
		{"own box", ownBox, snapshots.ActFork, tookIt, stranger, "no"},      //
		{"own box", ownBox, snapshots.ActDelete, tookIt, agent, "yes"},      // its agent, only what an agent of its thread took
		{"own box", ownBox, snapshots.ActDelete, personTook, agent, "no"},   // not what the person took
		{"own box", ownBox, snapshots.ActDelete, keptOne, agent, "no"},      // nor what somebody kept
		{"own box", ownBox, snapshots.ActDelete, personTook, person, "yes"}, // the person
		{"own box", ownBox, snapshots.ActKeep, tookIt, agent, "no"},         // Keep: the person
		{"own box", ownBox, snapshots.ActKeep, tookIt, person, "yes"},

		// The box a thread runs on. Owner: the box's thread, or the person.
		{"runs on", runsOn, snapshots.ActTake, none, agent, "yes"},          // that thread's agent
		{"runs on", runsOn, snapshots.ActTake, none, stranger, "no"},        //
		{"runs on", runsOn, snapshots.ActSee, tookIt, agent, "yes"},         // that agent, only what it took there
		{"runs on", runsOn, snapshots.ActSee, personTook, agent, "no"},      //
		{"runs on", runsOn, snapshots.ActSee, personTook, person, "yes"},    // the person
		{"runs on", runsOn, snapshots.ActRestore, tookIt, agent, "form"},    // its agent through a form in the thread
		{"runs on", runsOn, snapshots.ActRestore, personTook, agent, "no"},  // only what it sees
		{"runs on", runsOn, snapshots.ActRestore, tookIt, person, "yes"},    // the person, from the box's page
		{"runs on", runsOn, snapshots.ActFork, tookIt, agent, "no"},         // Fork: the person
		{"runs on", runsOn, snapshots.ActFork, tookIt, person, "yes"},       //
		{"runs on", runsOn, snapshots.ActDelete, tookIt, agent, "yes"},      // that agent, only what it took there
		{"runs on", runsOn, snapshots.ActDelete, keptOne, agent, "no"},      // and nobody kept
		{"runs on", runsOn, snapshots.ActDelete, personTook, agent, "no"},   //
		{"runs on", runsOn, snapshots.ActDelete, personTook, person, "yes"}, // the person
		{"runs on", runsOn, snapshots.ActKeep, tookIt, agent, "no"},         // Keep: the person
		{"runs on", runsOn, snapshots.ActKeep, tookIt, person, "yes"},       //

		// A kept snapshot. Owner: the person, from the moment it is kept.
		{"kept", ownBox, snapshots.ActSee, keptOne, person, "yes"},     // the person
		{"kept", ownBox, snapshots.ActSee, keptOne, agent, "yes"},      // the thread's agent while its box lives
		{"kept", ownBox, snapshots.ActPicture, keptOne, agent, "no"},   // without its picture
		{"kept", released, snapshots.ActSee, keptOne, agent, "no"},     // not once the box is released
		{"kept", released, snapshots.ActSee, keptOne, person, "yes"},   //
		{"kept", ownBox, snapshots.ActRestore, keptOne, agent, "no"},   // Restore: the person
		{"kept", ownBox, snapshots.ActRestore, keptOne, person, "yes"}, //
		{"kept", ownBox, snapshots.ActFork, keptOne, agent, "no"},      // Fork: the person, as a machine of theirs
		{"kept", released, snapshots.ActFork, keptOne, person, "yes"},  //
		{"kept", ownBox, snapshots.ActDelete, keptOne, agent, "no"},    // Delete: the person
		{"kept", ownBox, snapshots.ActDelete, keptOne, person, "yes"},  //
		{"kept", ownBox, snapshots.ActKeep, keptOne, agent, "no"},      // Keep: the person
		{"kept", ownBox, snapshots.ActKeep, keptOne, cli, "yes"},       // the CLI is the person's tool
	}
	for _, c := range table {
		b := c.box()
		s := c.what(b)
		err := snapshots.MayAct(c.who, c.column, b, s)
		got := "yes"
		if err != nil {
			got = "no"
		}
		want := c.may
		if want == "form" {
			want = "yes"
		}
		sname := "-"
		if s != nil {
			sname = s.ID
		}
		if got != want {
			t.Errorf("%s, %s of %s by %s %s: may %s, want %s (%v)", c.row, c.column, sname, c.who.Kind, c.who.Thread, got, c.may, err)
		}
	}
}
