package pagemodel

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/boxes"
	"github.com/boxsnap/boxsnap/app/snapshots/contents"
	"github.com/boxsnap/boxsnap/app/snapshots/fork"
	"github.com/boxsnap/boxsnap/app/snapshots/restore"
	"github.com/boxsnap/boxsnap/views"
)

// Dialog is every dialog's view data: an alert dialog whose focus starts
// on its safe choice; Kind picks its fields.
type Dialog struct {
	Page        views.Page
	Kind        string // take, restore, fork, keep, delete, rename, note, bulk
	Title       string
	Action      string
	Back        string
	Error       string
	Lines       []string
	Goes        []string
	After       []string
	Fingerprint string
	Submit      string
	RequestID   string
	Danger      bool
	Disabled    bool // the plan refuses: only Cancel

	// Take, Rename, Note.
	Name, NamePlaceholder, Note string
	OfferMemory                 bool
	MemoryLine                  string

	// Restore.
	// Changes says what a restore changes back ("14 files changed, 2
	// added, 1 removed since then"), where the backend can tell, and
	// ChangesHref lists them.
	Changes, ChangesHref string
	UndoOffered          bool
	UndoLocked           bool
	UndoLine             string
	NoUndo               bool
	Force                bool
	SubmitNoUndo         string

	// Keep.
	// Until is the date in the field, year-month-day, as it is sent back;
	// UntilWords the same day as the words say it ("Sat 2 Jan 2027").
	Until, MinDate, MaxDate, UntilWords string

	// Fork: where the new box goes, when there is a choice; Count is how
	// many boxes (1 unless the person asked for more), at most MaxCount.
	Places          []Place
	Count, MaxCount int

	// Bulk.
	Action2 string
	IDs     []string // the ones it would act on
	Picked  []string // every one ticked, sent back to be checked again
	Items   []string
	Skipped []string
}

// DialogBuilder builds the dialogs' view data from the core's plans: what
// each action would do, what goes, what it costs, and why it is refused.
// It holds only what building them reads: the core, and the row builder
// for the words a row and its dialog share (where a box lives, whether
// restores are off). Each dialog's builder lives in a file named for its
// dialog (RestoreDialog in restore_dialog.go).
type DialogBuilder struct {
	core     *snapshots.Service
	restores *restore.Restores
	boxes    *boxes.Boxes
	forks    *fork.Forks
	contents *contents.Contents
	rows     *RowBuilder
}

// fingerprint is a dialog's plan in a few bytes: the snapshot's state and
// keep, the box's generation and state, and the guard list. A dialog sends
// it back, and a post whose plan changed meanwhile is refused and shows
// the new plan rather than acting on the old one.
func fingerprint(b *snapshots.Box, sn *snapshots.Snapshot, guard []string, extra ...string) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s|%d|%s|", b.ID, b.Generation, b.State)
	if sn != nil {
		kept := ""
		if sn.KeptUntil != nil {
			kept = sn.KeptUntil.Format(time.RFC3339)
		}
		fmt.Fprintf(h, "%s|%s|%s|%s|", sn.ID, sn.State, kept, sn.Guest)
	}
	fmt.Fprintf(h, "%s|%s", strings.Join(guard, "\n"), strings.Join(extra, "\n"))
	return hex.EncodeToString(h.Sum(nil))[:20]
}

// agoWords says how long ago, "2 h 5 min".
func agoWords(d time.Duration) string {
	d = d.Round(time.Minute)
	h, m := int(d.Hours()), int(d.Minutes())%60
	switch {
	case h >= 48:
		return fmt.Sprintf("%d days", h/24)
	case h > 0 && m > 0:
		return fmt.Sprintf("%d h %d min", h, m)
	case h > 0:
		return fmt.Sprintf("%d h", h)
	case m > 0:
		return fmt.Sprintf("%d min", m)
	}
	return "less than a minute"
}

// aboutWords says an estimate, "About 15 s".
func aboutWords(d time.Duration) string {
	switch {
	case d <= time.Second:
		return "About 1 s"
	case d < time.Minute:
		return fmt.Sprintf("About %d s", int(d.Round(time.Second).Seconds()))
	}
	return fmt.Sprintf("About %d min", int(d.Round(time.Minute).Minutes()))
}

// StaleWords is what a dialog says when its plan changed since it opened.
const StaleWords = "This changed since the dialog opened, so nothing was done. Read it again: it shows what would happen now."
