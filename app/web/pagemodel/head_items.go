package pagemodel

import (
	"fmt"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/heads"
)

// headItems is a row's "Set as head": a ready snapshot of a box that is
// here, other than its head, becomes the snapshot the box's next one is
// taken from, without a restore. Nothing in the box changes, so it posts
// at once, with no dialog.
func headItems(b *snapshots.Box, sn *snapshots.Snapshot, base string) []MenuItem {
	if sn.State != snapshots.StateReady || b.ReleasedAt != nil || b.HeadID != nil && *b.HeadID == sn.ID {
		return nil
	}
	return []MenuItem{{Text: "Set as head", Label: fmt.Sprintf("Set as head: %s, of %s", sn.Name, b.Name), Href: base + "/head", Post: true}}
}

// headChosen says whether the box's head, head, was chosen without a
// restore after its newest take or restore (evs, its log newest first):
// then its files need not be the head's. An automatic take, which logs
// nothing, moves the head on, so the choice must still name the head.
func headChosen(evs []snapshots.LogEvent, head string) bool {
	for _, ev := range evs {
		switch ev.Kind {
		case heads.EvHeadSet:
			return ev.SnapshotID != nil && *ev.SnapshotID == head
		case snapshots.EvSnapshotTaken, snapshots.EvRestored:
			return false
		}
	}
	return false
}
