package pagemodel

import (
	"encoding/json"
	"fmt"
	"net/url"
	"time"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/boxview"
	"github.com/boxsnap/boxsnap/app/snapshots/heads"
	"github.com/boxsnap/boxsnap/app/snapshots/restore"
)

// restores is what a box's log says of its restores: each restore's result
// by its operation (an undo's UndoOf), and the newest one, which the box
// is now at.
type restores struct {
	byOp   map[string]restore.RestoreResult
	last   *restore.RestoreResult
	lastAt time.Time
	// tookAfter is set when a snapshot was taken after the newest restore.
	tookAfter bool
}

// restoresIn reads a box's restores from its log's newest events.
func restoresIn(evs []snapshots.LogEvent) restores {
	out := restores{byOp: map[string]restore.RestoreResult{}}
	for _, ev := range evs { // newest first
		switch ev.Kind {
		case snapshots.EvSnapshotTaken:
			if out.last == nil && ev.OperationID != nil {
				if _, isRestore := out.byOp[*ev.OperationID]; !isRestore {
					out.tookAfter = true
				}
			}
		case snapshots.EvRestored:
			var res restore.RestoreResult
			if json.Unmarshal(ev.Data, &res) != nil || ev.OperationID == nil {
				continue
			}
			out.byOp[*ev.OperationID] = res
			if out.last == nil {
				out.last, out.lastAt = &res, ev.At
			}
		}
	}
	return out
}

// mark gives the rows what the restores say: the snapshot the box was last
// restored to, and what each undo holds ("amber-fox at 23:01, before
// restoring to ‘before the migration’"). An undo keeps its record's name,
// "before the restore at 23:01", the specification's word for it.
func (rs restores) mark(b *snapshots.Box, rows []snapshotRowRef, rc RowContext) {
	for _, r := range rows {
		sn := r.sn
		if sn.UndoOf != nil {
			if res, ok := rs.byOp[*sn.UndoOf]; ok {
				r.row.Holds = fmt.Sprintf("Holds %s at %s, before restoring to ‘%s’.", b.Name, sn.TakenAt.In(rc.tz).Format("15:04"), res.TargetName)
			}
		}
		if rs.last != nil && sn.ID == rs.last.Target {
			r.row.Restored = "Restored to this at " + rs.lastAt.In(rc.tz).Format("15:04")
		}
	}
}

// snapshotRowRef pairs a row with its record while the card is built.
type snapshotRowRef struct {
	row *SnapRow
	sn  *snapshots.Snapshot
}

// nowRow is the first row of a box's list, as Proxmox's snapshot tree has:
// where the box is now, and whether it runs.
type nowRow struct {
	State string // "Running", "Stopped", or "" when unknown
	Line  string
}

// NowOf says where a box is now, from the page's one read: whether it
// runs, and whether its disk changed since its head, as its backend
// answers (unchanged, changed with how many files, or cannot tell).
func NowOf(rc RowContext, v *boxview.BoxView, rs restores) *nowRow {
	n := &nowRow{}
	if v.StatusErr == nil && v.Status.Exists {
		n.State = "Stopped"
		if v.Status.Running {
			n.State = "Running"
		}
	}
	b := v.Box
	if v.Head != nil && headChosen(v.Log, v.Head.ID) {
		n.Line = heads.NowHeadChosenWords(b.Name, v.Head.Name)
		return n
	}
	if v.Head == nil {
		if b.HeadID != nil {
			n.Line = NowHeadGoneWords(b.Name)
		} else {
			n.Line = NowNoHeadWords(b.Name)
		}
		return n
	}
	since := fmt.Sprintf("‘%s’, %s", v.Head.Name, WhenAt(v.Head.TakenAt, rc.Now, rc.tz))
	restored := rs.last != nil && !rs.tookAfter && rs.last.Target == v.Head.ID
	if restored {
		since = fmt.Sprintf("it was restored %s to ‘%s’", WhenAt(rs.lastAt, rc.Now, rc.tz), v.Head.Name)
	}
	n.Line = NowWords(b.Name, since, v.Changes, restored)
	return n
}

// historyPage is how many box log events the History card shows at once.
const historyPage = 10

// historyEvent is one line of a box's History card.
type historyEvent struct {
	When, What, Words, By string
}

// History is a box page's History card: the box log, newest first, paged.
type History struct {
	Events []historyEvent
	Older  string // the address that shows more, or ""
}

// HistoryShown is how many events the History card shows when asked for
// shown.
func HistoryShown(shown int) int {
	return min(max(shown, historyPage), snapshots.BoxLogKeep)
}

// HistoryOf is a box's History card from the page's one read of its log:
// shown events, each with who did it.
func HistoryOf(rc RowContext, v *boxview.BoxView, shown int) History {
	b := v.Box
	shown = HistoryShown(shown)
	evs := v.Log
	var h History
	if len(evs) > shown {
		evs = evs[:shown]
		h.Older = fmt.Sprintf("/boxes/%s?log=%d#history", url.PathEscape(b.Name), shown+historyPage)
	}
	for _, ev := range evs {
		what, words := EventParts(ev)
		thread, why := "", ""
		if ev.ActorThread != nil {
			thread = rc.Threads.title(*ev.ActorThread)
		}
		if ev.ActorWhy != nil {
			why = *ev.ActorWhy
		}
		h.Events = append(h.Events, historyEvent{When: WhenWords(ev.At, rc.Now, rc.tz), What: what, Words: words,
			By: snapshots.ByWords(ev.ActorKind, thread, why)})
	}
	return h
}
