package fork_test

import (
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/app/snapshots"
	forks "github.com/boxsnap/boxsnap/app/snapshots/fork"
	"github.com/boxsnap/boxsnap/providers"
)

// TestForkRoom: the check before a fork of the box now takes refuses a fork the
// storage has no room for, counting the take it makes first and every
// fork's copy of a fork into many, or one copy where forks share their
// snapshot's files; an unknown size refuses nothing.
func TestForkRoom(t *testing.T) {
	t.Parallel()
	n := func(v int64) *int64 { return &v }
	plan := func(free int64, fork, adds *int64) providers.SnapshotPlan {
		return providers.SnapshotPlan{Storage: providers.Storage{Name: "local-lvm", FreeBytes: free},
			Fork: providers.ForkPlan{OK: true, Bytes: fork}, Take: providers.TakePlan{OK: true, AddsBytes: adds}}
	}
	shared := func(free int64, fork, adds *int64) providers.SnapshotPlan {
		p := plan(free, fork, adds)
		p.Fork.Shared = true
		return p
	}
	ownDisks := func(free int64, fork, adds *int64, each int64) providers.SnapshotPlan {
		p := shared(free, fork, adds)
		p.Fork.EachBytes = &each
		return p
	}
	for _, tc := range []struct {
		name  string
		plan  providers.SnapshotPlan
		take  bool
		count int
		words string
	}{
		{"room for both", plan(10e9, n(4e9), n(1e9)), true, 1, ""},
		{"room for the fork, not with the take", plan(4.5e9, n(4e9), n(1e9)), true, 1, "local-lvm has 4.5 GB free, and the fork needs about 5.0 GB."},
		{"room for the fork without a take", plan(4.5e9, n(4e9), n(1e9)), false, 1, ""},
		{"no room for the fork", plan(3e9, n(4e9), nil), false, 1, "local-lvm has 3.0 GB free, and the fork needs about 4.0 GB."},
		{"the fork's size unknown", plan(0, nil, n(1e9)), true, 3, ""},
		{"room for one fork, not three", plan(10e9, n(4e9), n(1e9)), true, 3, "local-lvm has 10 GB free, and the 3 forks need about 13 GB."},
		{"room for three forks and the take", plan(13e9, n(4e9), n(1e9)), true, 3, ""},
		{"room for ten forks sharing one copy and the take", shared(5e9, n(4e9), n(1e9)), true, 10, ""},
		{"no room for the one copy ten forks share", shared(4.5e9, n(4e9), n(1e9)), true, 10, "local-lvm has 4.5 GB free, and the 10 forks need about 5.0 GB: one copy of the files, which they share."},
		{"room for the shared copy, not for ten disks of their own", ownDisks(5.5e9, n(4e9), n(1e9), 100e6), true, 10, "local-lvm has 5.5 GB free, and the 10 forks need about 6.0 GB: one copy of the files, which they share, and the disk each fork has of its own."},
		{"room for the shared copy and ten disks of their own", ownDisks(6e9, n(4e9), n(1e9), 100e6), true, 10, ""},
	} {
		err := forks.Room(tc.plan, tc.take, tc.count)
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
