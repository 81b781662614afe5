package fork_test

import (
	"context"
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	forks "github.com/boxsnap/boxsnap/app/snapshots/fork"
)

// TestForkNameOfAnotherThread: box names are one per install, so a name
// another thread's box holds cannot be given to a fork; the agent is told
// the name cannot be used, never that a box of that name exists (which
// would tell it another thread's box is there), for one fork and for many,
// and nothing is made. The person, who sees every box, is told it exists.
func TestForkNameOfAnotherThread(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := coretest.New(t, coretest.Options{})
	_, other, _ := e.Thread(t, "Someone else's work")
	e.Box(t, other, "secret-plan")
	e.Box(t, other, "try-2")
	_, agent, _ := e.Thread(t, "Try a fix")
	e.Box(t, agent, "amber-fox")
	sn := e.TakeReady(t, agent, "amber-fox", "before the fix")

	_, err := e.Forks.Fork(ctx, agent, forks.ForkRequest{Box: "amber-fox", Snapshot: sn.ID, Name: "secret-plan"})
	coretest.RefusedWith(t, err, "The name secret-plan cannot be used: choose another.")
	_, err = e.Forks.ForkMany(ctx, agent, forks.ForkManyRequest{Box: "amber-fox", Snapshot: sn.ID, Name: "try", Count: 3})
	coretest.RefusedWith(t, err, "The name try-2 cannot be used: choose another. No fork was made.")
	for _, err := range []error{
		e.Forks.NameFree(ctx, agent, "secret-plan"),
		func() error {
			_, err := e.Forks.Fork(ctx, agent, forks.ForkRequest{Box: "amber-fox", Snapshot: sn.ID, Name: "secret-plan"})
			return err
		}(),
	} {
		if err == nil || strings.Contains(err.Error(), "exists") {
			t.Fatalf("an agent was told of another thread's box: %v", err)
		}
	}
	for _, name := range []string{"try-1", "try-3"} {
		if _, err := e.Core.Box(ctx, snapshots.Owner(), name); err == nil {
			t.Fatalf("%s was made by a refused call", name)
		}
	}
	if err := e.Forks.NameFree(ctx, agent, "free-name"); err != nil {
		t.Fatalf("a free name: %v", err)
	}
	coretest.RefusedWith(t, e.Forks.NameFree(ctx, snapshots.Owner(), "secret-plan"), "A box named secret-plan exists already.")
}
