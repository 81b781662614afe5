package hosts

import (
	"strings"
	"testing"
	"time"

	"github.com/boxsnap/boxsnap/internal/wordshape"
)

// TestRefusalWordsShape: every refusal of the hosts is a full sentence or
// two, ending in one full stop, and names what it is about.
func TestRefusalWordsShape(t *testing.T) {
	t.Parallel()
	for _, w := range []string{notSharedWords("amber-fox", "host-a"), noOwnerWords("amber-fox", "docker"),
		alreadyOnWords("amber-fox", "host-a"), unknownHostWords("host-z"), hostGoneWords("host-a"),
		stillAliveWords("host-a", 30*time.Second), notMarkedGoneWords("host-a"), thisHostWords("host-b"),
		noSnapshotWords("amber-fox"), busyWords("amber-fox"), personOnlyWords, askOnTargetWords("amber-fox", "host-b"),
		takeOverOnTargetWords("host-a", "host-b"), EndedGoneWords("host-a", "host-b")} {
		wordshape.Check(t, w)
		if !strings.HasSuffix(w, ".") || strings.HasSuffix(w, "..") {
			t.Errorf("%q does not end with one full stop", w)
		}
	}
}

// TestMoveRefusalWords: the move's refusal says whose snapshots are where,
// and the fix, in the words the person reads.
func TestMoveRefusalWords(t *testing.T) {
	t.Parallel()
	if got, want := notSharedWords("amber-fox", "host-a"), "amber-fox's snapshots are on host host-a only; set a content store to move boxes between hosts."; got != want {
		t.Fatalf("%q, want %q", got, want)
	}
	if got, want := stillAliveWords("host-a", 90*time.Second), "Host host-a was seen 90 seconds ago; a host still seen alive keeps its boxes. Stop boxsnap there, and wait 2 minutes."; got != want {
		t.Fatalf("%q, want %q", got, want)
	}
}

// TestBackfillWordsSayTheInterval: the words on snapshots from before the
// content store say how often this host ships them as its setting says,
// 5 minutes when none is given; and the words on a host whose queue holds
// work no live worker runs are a full sentence that names the host.
func TestBackfillWordsSayTheInterval(t *testing.T) {
	t.Parallel()
	if got, want := UnshippedWords(3, 30*time.Second), "3 snapshots on this host are not in the content store yet: taken before it was set, on this host alone. This host ships them, 20 every 30 seconds, oldest first, while boxsnap serve or work runs here; until its newest is shipped, a box cannot move."; got != want {
		t.Fatalf("%q, want %q", got, want)
	}
	if got := notShippedWords("amber-fox", "one", "host-a", 0); !strings.Contains(got, "Host host-a ships it within 5 minutes,") {
		t.Fatalf("with no interval given: %q", got)
	}
	w := noWorkerWords("host-a", 2)
	wordshape.Check(t, w)
	if want := "2 jobs wait for host host-a and no worker of it is alive to run them: start boxsnap work (or boxsnap serve with its workers) on host-a, or move its boxes to another host."; w != want {
		t.Fatalf("%q, want %q", w, want)
	}
}
