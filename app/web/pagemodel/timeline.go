package pagemodel

import (
	"fmt"
	"net/url"
	"strconv"
	"time"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/boxview"
)

// TimelinePage is how many automatic snapshots the box page's timeline
// shows at a time; Older and Newer move along it.
const TimelinePage = 40

// Timeline is the box page's Timeline card: the box's
// automatic snapshots, newest first, grouped by day and by hour, each a row
// with its picture where the box has a screen, Restore… (the usual dialog
// and undo), Save… and Keep….
type Timeline struct {
	Box    string
	Words  string // "12 automatic snapshots · on, checked every 15 s while it runs"
	Toggle string // "Turn off for amber-fox" / "Turn on for amber-fox"
	Value  string // what Toggle posts: on or off
	Action string
	Days   []timelineDay
	None   string
	// Newer and Older move along the timeline, a page at a time; Shown
	// says which part is shown ("1 to 40 of 112").
	Newer, Older, Shown string
	Delete              Action
	Back                string
}

type timelineDay struct {
	Title string
	Hours []timelineHour
}

type timelineHour struct {
	Title, ID string
	Rows      []SnapRow
}

// TimelineOf builds a box's timeline from offset (a page's first row),
// from the page's one read; its words say what the automatic history does
// for the box as it is now.
func (rb *RowBuilder) TimelineOf(v *boxview.BoxView, rc RowContext, offset int) Timeline {
	b := v.Box
	back := "/boxes/" + b.Name
	t := Timeline{Box: b.Name, Back: back, Action: "/boxes/" + url.PathEscape(b.Name) + "/history"}
	var autos []*snapshots.Snapshot
	for _, sn := range v.Snapshots {
		if sn.Automatic {
			autos = append(autos, sn)
		}
	}
	if v.History.On {
		t.Toggle, t.Value = "Turn off for "+b.Name, "off"
	} else {
		t.Toggle, t.Value = "Turn on for "+b.Name, "on"
	}
	if b.State != "ready" {
		t.Toggle = ""
	}
	run := timelineRun(v)
	t.Words = TimelineWords(b.Name, len(autos), v.History.On, v.History.Every, run)
	t.Delete = Action{Label: "Delete history…", Href: "/boxes/" + url.PathEscape(b.Name) + "/history/delete?back=" + url.QueryEscape(back)}
	if len(autos) == 0 {
		t.Delete.Why = NoAutomaticWords(b.Name)
		t.None = TimelineNoneWords(b.Name, v.History.On, run)
		return t
	}
	if offset < 0 || offset >= len(autos) {
		offset = 0
	}
	end := min(offset+TimelinePage, len(autos))
	t.Shown = fmt.Sprintf("%d to %d of %d, newest first", offset+1, end, len(autos))
	if offset > 0 {
		t.Newer = fmt.Sprintf("/boxes/%s?tl=%d#timeline", url.PathEscape(b.Name), max(offset-TimelinePage, 0))
	}
	if end < len(autos) {
		t.Older = fmt.Sprintf("/boxes/%s?tl=%d#timeline", url.PathEscape(b.Name), end)
	}
	bs := snapshots.BoxSnapshots{Box: b, Snapshots: v.Snapshots, Pins: v.Pins}
	g := rb.GroupWith(bs, autos[offset:end], rc, "", restoresIn(v.Log))
	for i, sn := range autos[offset:end] {
		at := sn.TakenAt.In(rc.tz)
		day := whenDay(at, rc.Now.In(rc.tz))
		if len(t.Days) == 0 || t.Days[len(t.Days)-1].Title != day {
			t.Days = append(t.Days, timelineDay{Title: day})
		}
		d := &t.Days[len(t.Days)-1]
		hour := at.Format("15:00")
		if len(d.Hours) == 0 || d.Hours[len(d.Hours)-1].Title != hour {
			d.Hours = append(d.Hours, timelineHour{Title: hour, ID: "tl-" + at.Format("2006-01-02-15")})
		}
		h := &d.Hours[len(d.Hours)-1]
		h.Rows = append(h.Rows, g.Rows[i])
	}
	return t
}

// timelineRun says how the box is now for the automatic history: running,
// stopped, gone (released, in the trash, or its guest missing), or unknown
// (its backend did not answer).
func timelineRun(v *boxview.BoxView) RunState {
	switch {
	case v.Box.ReleasedAt != nil || v.Box.State != snapshots.BoxReady:
		return RunGone
	case v.StatusErr != nil:
		return RunUnknown
	case !v.Status.Exists:
		return RunGone
	case v.Status.Running:
		return RunRunning
	}
	return RunStopped
}

// whenDay names a day as the rows do: Today, Yesterday, a weekday within
// the week, a date before.
func whenDay(t, now time.Time) string {
	y1, m1, d1 := t.Date()
	y2, m2, d2 := now.Date()
	days := int(time.Date(y2, m2, d2, 0, 0, 0, 0, time.UTC).Sub(time.Date(y1, m1, d1, 0, 0, 0, 0, time.UTC)).Hours() / 24)
	switch {
	case days <= 0:
		return "Today"
	case days == 1:
		return "Yesterday"
	case days < 7:
		return t.Format("Monday 2 Jan")
	case y1 == y2:
		return t.Format("2 Jan")
	}
	return t.Format("2 Jan 2006")
}

// EveryWords says a cadence: "15 s", "10 min".
func EveryWords(seconds int) string {
	if seconds%60 == 0 && seconds >= 60 {
		return strconv.Itoa(seconds/60) + " min"
	}
	return strconv.Itoa(seconds) + " s"
}

// saveItems are a row's Save… (an automatic snapshot) or Unsave… (a saved
// one that is not an undo), each disabled with why when it is refused now.
func saveItems(b *snapshots.Box, sn *snapshots.Snapshot, base, q string, elig func(snapshots.Action, snapshots.Change) string) []MenuItem {
	switch {
	case sn.Automatic:
		why := elig(snapshots.ActTake, snapshots.ChangeRename)
		if b.State != "ready" {
			why = ReleasedTakesNoneWords(b.Name)
		}
		return []MenuItem{{Text: "Save…", Label: fmt.Sprintf("Save %s…", sn.Name), Href: base + "/save" + q, Why: why}}
	case sn.UndoOf == nil && sn.State == snapshots.StateReady:
		return []MenuItem{{Text: "Unsave…", Label: fmt.Sprintf("Unsave %s: make it automatic again…", sn.Name), Href: base + "/unsave" + q,
			Why: elig(snapshots.ActDelete, snapshots.ChangeRename)}}
	}
	return nil
}
