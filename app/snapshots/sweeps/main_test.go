package sweeps_test

import (
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/dbtest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/take"
)

// TestMain runs the tests on the private PostgreSQL dbtest starts.
func TestMain(m *testing.M) {
	os.Exit(dbtest.Main(m))
}

func taken(t *testing.T, e *coretest.Env, box, name string) *snapshots.Snapshot {
	t.Helper()
	op, sn, err := e.Take.Take(context.Background(), snapshots.Owner(), take.TakeRequest{Box: box, Name: name})
	if err != nil {
		t.Fatal(err)
	}
	if got := e.Wait(t, op); got.State != snapshots.OpDone {
		t.Fatalf("take: %s %s", got.State, coretest.Deref(got.Error))
	}
	sn, _, _ = e.Core.Snapshot(context.Background(), snapshots.Owner(), sn.ID)
	return sn
}

func jsonOf(raw []byte, v any) error { return json.Unmarshal(raw, v) }
