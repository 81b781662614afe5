package take

import (
	"testing"
	"time"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

// TestUniqueTimedName: an undo's name that repeats says the seconds, then
// the date, never a counter while those differ.
func TestUniqueTimedName(t *testing.T) {
	at := time.Date(2026, 1, 2, 16, 36, 7, 0, time.UTC)
	name := snapshots.UndoName(at, time.UTC)
	for _, c := range []struct {
		taken map[string]bool
		want  string
	}{
		{map[string]bool{}, "before the restore at 16:36"},
		{map[string]bool{name: true}, "before the restore at 16:36:07"},
		{map[string]bool{name: true, name + ":07": true}, "before the restore at 16:36:07 on 2 Jan"},
	} {
		if got := uniqueTimedName(name, at, time.UTC, c.taken); got != c.want {
			t.Errorf("UniqueTimedName with %v = %q, want %q", c.taken, got, c.want)
		}
	}
}
