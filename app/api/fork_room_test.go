package api

import (
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/providers"
)

// TestForkRoom: box_fork's check before its take refuses a fork the
// storage has no room for, counting the take it makes first; an unknown
// size refuses nothing.
func TestForkRoom(t *testing.T) {
	t.Parallel()
	n := func(v int64) *int64 { return &v }
	plan := func(free int64, fork, adds *int64) providers.SnapshotPlan {
		return providers.SnapshotPlan{Storage: providers.Storage{Name: "local-lvm", FreeBytes: free},
			Fork: providers.ForkPlan{OK: true, Bytes: fork}, Take: providers.TakePlan{OK: true, AddsBytes: adds}}
	}
	for _, tc := range []struct {
		name  string
		plan  providers.SnapshotPlan
		take  bool
		words string
	}{
		{"room for both", plan(10e9, n(4e9), n(1e9)), true, ""},
		{"room for the fork, not with the take", plan(4.5e9, n(4e9), n(1e9)), true, "local-lvm has 4.5 GB free, and the fork needs about 5.0 GB."},
		{"room for the fork without a take", plan(4.5e9, n(4e9), n(1e9)), false, ""},
		{"no room for the fork", plan(3e9, n(4e9), nil), false, "local-lvm has 3.0 GB free, and the fork needs about 4.0 GB."},
		{"the fork's size unknown", plan(0, nil, n(1e9)), true, ""},
	} {
		err := forkRoom(tc.plan, tc.take)
		if tc.words == "" {
			if err != nil {
				t.Errorf("%s: refused: %v", tc.name, err)
			}
			continue
		}
		ref, ok := snapshots.AsRefusal(err)
		if !ok || ref.Code != snapshots.CodeRoom || !ref.TryAgain || !strings.Contains(ref.Words, tc.words) {
			t.Errorf("%s: %v, want a room refusal, try again, saying %q", tc.name, err, tc.words)
		}
	}
}
