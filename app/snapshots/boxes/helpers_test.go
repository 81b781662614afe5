package boxes_test

import (
	"context"
	"testing"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
)

func names(t *testing.T, e *coretest.Env, box string) map[string]*snapshots.Snapshot {
	t.Helper()
	list, err := e.Core.List(context.Background(), snapshots.Owner(), snapshots.ListQuery{Box: box})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*snapshots.Snapshot{}
	for _, s := range list[0].Snapshots {
		out[s.Name] = s
	}
	return out
}

func restoreTo(t *testing.T, e *coretest.Env, c snapshots.Caller, box, snap string) *snapshots.Operation {
	t.Helper()
	op, err := e.Restores.Restore(context.Background(), c, snapshots.RestoreRequest{Box: box, Snapshot: snap, Replace: true})
	if err != nil {
		t.Fatalf("restore %s: %v", snap, err)
	}
	op = e.Wait(t, op)
	if op.State != snapshots.OpDone {
		t.Fatalf("restore %s ended %s: %s (%s)", snap, op.State, coretest.Deref(op.Error), coretest.Deref(op.Observed))
	}
	return op
}

// keys is the names of m.
func keys(m map[string]*snapshots.Snapshot) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
