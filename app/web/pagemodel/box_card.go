package pagemodel

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/boxview"
	"github.com/boxsnap/boxsnap/app/snapshots/heads"
	"github.com/boxsnap/boxsnap/app/snapshots/restore"
	"github.com/boxsnap/boxsnap/providers"
)

// Notice is one of a box page's notices: a restore's, for 24 hours, with
// Undo; a restore boxsnap could not confirm, with Check now.
type Notice struct {
	Words    string
	Amber    bool
	UndoHref string
	UndoName string
	CheckOp  string
}

// BoxCard is a box's Snapshots card.
type BoxCard struct {
	Count    string
	Take     Action
	NoTake   bool   // the backend has no snapshots: no Take snapshot
	None     string // "Boxes on … have no snapshots."
	Refusal  string // why the plan refuses a take now
	Group    BoxGroup
	Footer   string
	Progress string // a running restore's step, in words
	Back     string
	Screen   bool // the box has a screen: rows keep a picture's place
}

// BoxLive is the part of a box's page that polls while an operation runs:
// its notices and its Snapshots card.
type BoxLive struct {
	Notices []Notice
	// Requests wait for the person's word on this box.
	Requests []ApprovalItem
	Card     BoxCard
	Busy     bool
	LiveURL  string
	Announce string
	Done     string
	// Timeline is the box's automatic snapshots: in the live
	// part, so thinning, Save and Delete history show as they happen.
	Timeline Timeline
}

// Fact is one of a box page's facts.
type Fact struct {
	Term, Value string
}

// Facts are a box's facts: what it is, where, whose, and for a fork
// "Forked from amber-fox, ‘before the migration’ (yesterday 23:39)", from
// the page's one read.
func (rb *RowBuilder) Facts(r Request, v *boxview.BoxView, h BoxHead) []Fact {
	b := v.Box
	out := []Fact{{"Kind", strings.Join(h.Badges, " · ")}, {"Where", strings.TrimPrefix(h.Where, "on ")}}
	if b.ReleasedAt == nil && b.State != snapshots.BoxTrashed {
		st := v.Status
		if v.StatusErr != nil {
			out = append(out, Fact{"State", "unknown: " + v.StatusErr.Error()})
		} else if !st.Exists {
			out = append(out, Fact{"State", "its guest is missing"})
		} else {
			// Running or stopped shows on the Now row of its Snapshots card;
			// why the backend stopped it by itself shows here, and that a
			// box running on has reached its disk bound.
			if w := snapshots.DiskStopWords(b.Name, st.DiskStop); w != "" {
				label := "Stopped"
				if st.DiskStop.Full {
					label = "Disk"
				}
				out = append(out, Fact{label, w})
			}
			if sz := SizeOfBox(st.Size); sz != "" {
				out = append(out, Fact{"Size", sz})
			}
		}
	}
	switch {
	case h.Thread != "":
		out = append(out, Fact{"Thread", h.Thread})
	case h.YourMachine:
		out = append(out, Fact{"Whose", "Your machine"})
	}
	out = append(out, Fact{"Head", HeadWords(v)})
	tz := rb.core.TimeZone(r.Context())
	if f := ForkedFromWords(b.ForkedFrom, time.Now(), tz); f != "" {
		out = append(out, Fact{"Made", f})
	} else {
		out = append(out, Fact{"Made", b.CreatedAt.In(tz).Format("2 Jan 2006 15:04")})
	}
	return out
}

// BoxLiveURL is the address of a box page's live region: the whole page
// below the navigation, drawn again from one read.
func BoxLiveURL(box, back string, tl int, log string) string {
	u := "/boxes/" + url.PathEscape(box) + "/live?in=page&back=" + url.QueryEscape(back)
	if tl > 0 {
		u += "&tl=" + strconv.Itoa(tl)
	}
	if n, err := strconv.Atoi(log); err == nil && n > 0 {
		u += "&log=" + strconv.Itoa(n)
	}
	return u
}

// DoneWords is what a settled card says in the live region: the box log's
// newest event.
func DoneWords(v *boxview.BoxView) string {
	if len(v.Log) == 0 {
		return v.Box.Name + ": done."
	}
	return EventLine(v.Box.Name, v.Log[0])
}

// Card builds a box's Snapshots card: the count, Take snapshot with why it
// is refused, the rows, a running restore's step, and what goes with the
// box.
func (rb *RowBuilder) Card(r Request, v *boxview.BoxView, rc RowContext, rs restores, back string) (BoxCard, error) {
	ctx := r.Context()
	b := v.Box
	bs := snapshots.BoxSnapshots{Box: b, Snapshots: v.Snapshots, Pins: v.Pins}
	rc.Threads.KnowBoxes([]snapshots.BoxSnapshots{bs})
	c := BoxCard{Back: back, Screen: b.HasScreen}
	live := "/boxes/" + url.PathEscape(b.Name) + "/live?in=page&back=" + url.QueryEscape(back)
	// The card lists the saved snapshots; the automatic ones are on the
	// page's timeline.
	var saved []*snapshots.Snapshot
	for _, sn := range bs.Snapshots {
		if !sn.Automatic {
			saved = append(saved, sn)
		}
	}
	c.Group = rb.GroupWith(bs, saved, rc, live, rs)
	for _, sn := range bs.Snapshots {
		if sn.Automatic && (sn.State == snapshots.StateTaking || sn.State == snapshots.StateDeleting || len(bs.Pins[sn.ID]) > 0) {
			c.Group.Busy = true // the timeline's work shows on the card's poll
		}
	}
	if b.ReleasedAt == nil {
		c.Group.Now = NowOf(rc, v, rs)
	}
	settings, _ := rb.core.Settings(ctx)
	counts := snapshots.CountOf(saved)
	be, _ := rb.core.BackendOf(b)
	snapping := rb.core.Snapshotting(b)
	if snapping == nil {
		c.NoTake = true
		c.None = snapshots.NoSnapshotsWords(be.Label)
		return c, nil
	}
	holds := "disk"
	if snapping.OffersMemory() {
		holds = "disk, or disk and memory"
	}
	c.Count = counts.Words() + " · " + counts.LimitWords(settings.PerBox) + " · " + holds + " · " + rb.WhereWords(b)
	c.Take = Action{Label: "Take snapshot", Href: "/boxes/" + url.PathEscape(b.Name) + "/take?back=" + url.QueryEscape(back)}
	if b.State == snapshots.BoxTrashed {
		c.Take.Why = InTrashWords(b.Name)
	} else if b.ReleasedAt != nil || b.State != snapshots.BoxReady {
		c.Take.Why = ReleasedTakesNoneWords(b.Name)
	} else if _, _, plan, err := rb.core.Plan(ctx, snapshots.Owner(), b.ID, ""); err != nil {
		c.Take.Why = RefusalWords(err)
	} else if plan.Locked != nil {
		c.Take.Why = snapshots.LockedWords(be.Label, b.Name, plan.Locked.Lock, plan.Locked.Fix)
	} else if !plan.Take.OK {
		c.Take.Why = plan.Take.Why
	}
	c.Refusal = c.Take.Why
	what := "the disk"
	if snapping.OffersMemory() {
		what = "the disk, and the memory when you ask"
	}
	c.Footer = fmt.Sprintf("Snapshots hold %s. They go when %s is released, unless kept.", what, b.Name)
	for _, pins := range bs.Pins {
		for _, p := range pins {
			if p.Kind != snapshots.OpRestore {
				continue
			}
			if op := v.Ops[p.Operation]; op != nil && op.State == snapshots.OpRunning {
				c.Progress = StepWords(op.Step) + "…"
				c.Group.Busy = true
				c.Group.Announce = fmt.Sprintf("Restoring %s: %s.", b.Name, strings.ToLower(StepWords(op.Step)))
			}
		}
	}
	if c.Progress == "" {
		// boxsnap's own work on the box, in place of a lock it holds
		// (the core's lock notice is nil meanwhile).
		if op := v.Running; op != nil {
			c.Progress = StepWords(op.Step) + "…"
		}
	}
	return c, nil
}

// Notices are a box page's notices, from its one read: the newest
// restore's (24 hours, with Undo) unless a reset came after it, and the
// operations boxsnap could not confirm (with Check now). A notice names
// only snapshots the read holds, and its Undo restores the same snapshot as
// the header's Undo….
func (rb *RowBuilder) Notices(r Request, v *boxview.BoxView, rs restores) []Notice {
	b := v.Box
	tz := rb.core.TimeZone(r.Context())
	now := time.Now()
	byID := make(map[string]*snapshots.Snapshot, len(v.Snapshots))
	for _, sn := range v.Snapshots {
		byID[sn.ID] = sn
	}
	var out []Notice
	seen := map[string]bool{}
	restoreShown := false
	for i, ev := range v.Log {
		if i < boxview.BoxViewOps && ev.OperationID != nil && !seen[*ev.OperationID] {
			seen[*ev.OperationID] = true
			if op := v.Ops[*ev.OperationID]; op != nil && op.State == snapshots.OpUnknown {
				out = append(out, Notice{Words: snapshots.UnknownWords(b.Name, op), Amber: true, CheckOp: op.ID})
			}
		}
		if restoreShown || now.Sub(ev.At) > snapshots.RestoreNoticeFor {
			continue
		}
		switch ev.Kind {
		case snapshots.EvReset, snapshots.EvResetUndone, snapshots.EvResetFailed:
			// A reset after a restore makes the restore's notice old news:
			// the History card says both.
			restoreShown = true
		case snapshots.EvRestored:
			restoreShown = true
			var res restore.RestoreResult
			if err := json.Unmarshal(ev.Data, &res); err != nil {
				rb.logger.Warn("a restore's event data", "box", b.Name, "event", ev.ID, "err", err)
			}
			out = append(out, rb.restoreNotice(r, v, rs, byID, ev, res, now, tz))
		case snapshots.EvRestoreFailed:
			restoreShown = true
			out = append(out, Notice{Words: snapshots.UnfinishedWords("The restore at "+ev.At.In(tz).Format("15:04"), ev.Words, ""), Amber: true})
		}
	}
	return out
}

// restoreNotice is a restore's notice: what it restored to, by whom, and
// its Undo when its undo is still the box's newest.
func (rb *RowBuilder) restoreNotice(r Request, v *boxview.BoxView, rs restores, byID map[string]*snapshots.Snapshot,
	ev snapshots.LogEvent, res restore.RestoreResult, now time.Time, tz *time.Location) Notice {
	b := v.Box
	thread, why := "", ""
	if ev.ActorThread != nil {
		if t, err := rb.boxes.Thread(r.Context(), snapshots.Owner(), *ev.ActorThread); err == nil {
			thread = t.Title
		}
	}
	if ev.ActorWhy != nil {
		why = *ev.ActorWhy
	}
	by := snapshots.ByWords(ev.ActorKind, thread, why)
	at := ev.At.In(tz).Format("15:04")
	var n Notice
	if sn := byID[res.Target]; sn != nil {
		taken := ", taken " + WhenAt(sn.TakenAt, now, tz)
		// An undo is named for its restore; say what it holds.
		if sn.UndoOf != nil {
			if was, ok := rs.byOp[*sn.UndoOf]; ok && byID[was.Target] != nil {
				taken = fmt.Sprintf(" (%s as it was at %s, before restoring to ‘%s’)", b.Name, sn.TakenAt.In(tz).Format("15:04"), byID[was.Target].Name)
			}
		}
		n.Words = fmt.Sprintf("Restored at %s to ‘%s’%s, %s.", at, sn.Name, taken, by)
	} else {
		n.Words = RestoredToDeletedWords(at, by)
	}
	if res.Undo == "" {
		return n
	}
	switch {
	case v.Undo != nil && v.Undo.ID == res.Undo:
		n.Words += fmt.Sprintf(" Undo restores ‘%s’, %s as it was just before.", v.Undo.Name, b.Name)
		n.UndoName = v.Undo.Name
		n.UndoHref = UndoHref(b, v.Undo)
	case byID[res.Undo] == nil:
		n.Words += " " + UndoDeletedWords
	}
	return n
}

// UndoHref is where both Undo controls of a box's page go: the restore
// dialog of its newest undo.
func UndoHref(b *snapshots.Box, undo *snapshots.Snapshot) string {
	return fmt.Sprintf("/boxes/%s/snapshots/%s/restore?back=%s", url.PathEscape(b.Name), undo.ID, url.QueryEscape("/boxes/"+b.Name))
}

// HeadWords says the box's head, the snapshot its next one is taken from:
// it moves forward by itself on a take, and elsewhere only by a restore or
// a row's Set as head. A box an import made from competing tips has none
// until someone chooses.
func HeadWords(v *boxview.BoxView) string {
	name := ""
	if v.Head != nil {
		name = v.Head.Name
	}
	return heads.HeadFactWords(name, v.Box.HeadID != nil, len(v.Snapshots) > 0)
}

// SizeOfBox says a box's size in GiB: "4 cores · 8 GiB
// memory · 40 GiB disk", with what a fork shares with its snapshot's
// other forks apart ("0.2 GiB disk · 0.7 GiB shared with its snapshot's
// other forks"), or "" when its backend does not say.
func SizeOfBox(sz *providers.BoxSize) string {
	if sz == nil {
		return ""
	}
	var parts []string
	if sz.Cores > 0 {
		parts = append(parts, Plural(sz.Cores, "core", "cores"))
	}
	gib := func(n int64) string {
		g := float64(n) / (1 << 30)
		if g < 0.1 {
			return "under 0.1 GiB"
		}
		if g < 10 {
			return strings.TrimSuffix(fmt.Sprintf("%.1f", g), ".0") + " GiB"
		}
		return fmt.Sprintf("%.0f GiB", g)
	}
	if sz.MemoryBytes > 0 {
		parts = append(parts, gib(sz.MemoryBytes)+" memory")
	}
	if sz.DiskBytes > 0 {
		parts = append(parts, gib(sz.DiskBytes)+" disk")
	}
	if sz.SharedBytes > 0 {
		parts = append(parts, gib(sz.SharedBytes)+" shared with its snapshot's other forks")
	}
	return strings.Join(parts, " · ")
}

// Forking is a new box's page while its fork runs: the source, the
// snapshot and the step, polled until the operation ends.
type Forking struct {
	Name, From, Step, Failed, LiveURL, Goto string
	Busy                                    bool
}
