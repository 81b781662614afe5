package heads

import (
	"fmt"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

// logHeadSetWords: head-set, the snapshot the box's next take is taken from.
func logHeadSetWords(name, id string) string { return "the head is now " + snapshots.NamedID(name, id) }

// HeadSetWords says a box's head was chosen without a restore.
func HeadSetWords(name, box string) string {
	return fmt.Sprintf("‘%s’ is the head of %s: its next snapshot is taken from it. Nothing in the box changed.", name, box)
}

// HeadIsWords says which snapshot a box's head is: named ‘cp02’ (ID), or
// words for a head the caller may not see.
func HeadIsWords(named, box string) string {
	return fmt.Sprintf("The head of %s is %s: its next snapshot is taken from it.", box, named)
}

// HiddenHeadWords names a head the caller may not see.
const HiddenHeadWords = "a snapshot you cannot see"

// NoHeadWords says a box has no head, and how to choose one; choose is the
// surface's way, such as "boxsnap snapshot head amber-fox <snapshot>".
func NoHeadWords(box, choose string) string {
	return fmt.Sprintf("%s has no head: its next snapshot is taken from none. Choose one with %s.", box, choose)
}

// headNotReadyWords refuses a head on a snapshot that is not ready.
func headNotReadyWords(name, state string) string {
	return fmt.Sprintf("‘%s’ is %s: only a ready snapshot can be the head.", name, state)
}

// HeadFactWords is the box page's Head fact: head names the head, or is ""
// when it has none (set says it had one, deleted since); some says the box
// has snapshots, one of which someone may choose.
func HeadFactWords(head string, set, some bool) string {
	switch {
	case head != "":
		return fmt.Sprintf("‘%s’: its next snapshot is taken from it.", head)
	case set:
		return "A deleted snapshot: its next snapshot is taken from it."
	case some:
		return "None: choose one with Set as head in a snapshot's menu."
	}
	return "None yet: its first snapshot becomes its head."
}

// NowHeadChosenWords is the Now row of a box whose head was chosen without
// a restore since its last take or restore: its files need not be the
// head's, so the row does not compare them.
func NowHeadChosenWords(box, head string) string {
	return fmt.Sprintf("%s as it is now. Its head ‘%s’ was chosen without a restore: its next snapshot is taken from it, and its files may differ from it.", box, head)
}
