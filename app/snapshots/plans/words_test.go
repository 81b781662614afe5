package plans_test

import (
	"testing"

	"github.com/boxsnap/boxsnap/app/snapshots/plans"
)

// TestReleaseWords: the release page says what goes and what stays in plain
// words, for none, one and many.
func TestReleaseWords(t *testing.T) {
	for _, c := range []struct {
		goes, kept int
		want       string
	}{
		{0, 0, "calm-moss has no snapshots."},
		{1, 0, "Its snapshot goes with it."},
		{3, 0, "Its 3 snapshots go with it."},
		{0, 1, "No snapshot goes with it: its kept snapshot stays, listed under it as released, until its keep date."},
		{1, 2, "Its one snapshot that nobody kept goes with it; its 2 kept snapshots stay, listed under it as released, until their keep dates."},
		{4, 1, "Its 4 snapshots that nobody kept go with it; its kept snapshot stays, listed under it as released, until its keep date."},
	} {
		if got := plans.ReleaseSnapshotsWords("calm-moss", c.goes, c.kept); got != c.want {
			t.Errorf("%d go, %d kept: %q, want %q", c.goes, c.kept, got, c.want)
		}
	}
}
