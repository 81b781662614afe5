package web

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/views"
)

// notice is one of a box page's notices: a restore's, for 24 hours, with
// Undo; a restore boxsnap could not confirm, with Check now.
type notice struct {
	Words    string
	Amber    bool
	UndoHref string
	UndoName string
	CheckOp  string
}

// boxCard is a box's Snapshots card.
type boxCard struct {
	Count    string
	Take     action
	NoTake   bool   // the backend has no snapshots: no Take snapshot
	None     string // "Boxes on … have no snapshots."
	Refusal  string // why the plan refuses a take now
	Group    boxGroup
	Footer   string
	Progress string // a running restore's step, in words
	Back     string
	Screen   bool // the box has a screen: rows keep a picture's place
}

// boxLive is the part of a box's page that polls while an operation runs:
// its notices and its Snapshots card.
type boxLive struct {
	Notices []notice
	// Requests wait for the person's word on this box (section 5).
	Requests []approvalItem
	Card     boxCard
	Busy     bool
	LiveURL  string
	Announce string
	Done     string
	// Timeline is the box's automatic snapshots (issue 16): in the live
	// part, so thinning, Save and Delete history show as they happen.
	Timeline timeline
}

type boxPage struct {
	Page views.Page
	Box  *snapshots.Box
	Head boxHead
	Live boxLive
	// Facts are the page's facts: kind, where, and where a fork came from.
	Facts []fact
	// Forking is set while the box is being forked into, before its own
	// page can say more.
	Forking *forking
	// History is the box log, newest first, paged.
	History history
	// Undo is the box's newest undo, of a reset or a restore, or nil.
	Undo *snapshots.Snapshot
	// Trashed says when a box in the trash goes, or "".
	Trashed string
}

// fact is one of a box page's facts.
type fact struct {
	Term, Value string
}

// facts are a box's facts: what it is, where, whose, and for a fork
// "Forked from amber-fox, ‘before the migration’ (yesterday 23:39)".
func (s *Server) facts(r *http.Request, b *snapshots.Box, h boxHead) []fact {
	out := []fact{{"Kind", strings.Join(h.Badges, " · ")}, {"Where", strings.TrimPrefix(h.Where, "on ")}}
	if b.ReleasedAt == nil {
		if st, err := s.opts.Core.Boxes().BoxStatus(r.Context(), snapshots.Owner(), b.ID); err != nil {
			out = append(out, fact{"State", "unknown: " + err.Error()})
		} else if !st.Exists {
			out = append(out, fact{"State", "its guest is missing"})
		} else {
			// Running or stopped shows on the Now row of its Snapshots card;
			// why the backend stopped it by itself shows here.
			if w := snapshots.DiskStopWords(b.Name, st.DiskStop); w != "" {
				out = append(out, fact{"Stopped", w})
			}
			if sz := sizeOfBox(st.Size); sz != "" {
				out = append(out, fact{"Size", sz})
			}
		}
	}
	switch {
	case h.Thread != "":
		out = append(out, fact{"Thread", h.Thread})
	case h.YourMachine:
		out = append(out, fact{"Whose", "Your machine"})
	}
	out = append(out, fact{"Head", s.headWords(r, b)})
	tz := s.opts.Core.TimeZone(r.Context())
	if f := forkedFromWords(b.ForkedFrom, time.Now(), tz); f != "" {
		out = append(out, fact{"Made", f})
	} else {
		out = append(out, fact{"Made", b.CreatedAt.In(tz).Format("2 Jan 2006 15:04")})
	}
	return out
}

func (s *Server) boxLive(r *http.Request, b *snapshots.Box, back string) (boxLive, error) {
	c, err := s.card(r, b, back)
	if err != nil {
		return boxLive{}, err
	}
	tl, _ := strconv.Atoi(r.URL.Query().Get("tl"))
	t, err := s.timelineOf(r, b, tl)
	if err != nil {
		return boxLive{}, err
	}
	l := boxLive{Notices: s.notices(r, b), Card: c, Busy: c.Group.Busy, Announce: c.Group.Announce, Timeline: t,
		LiveURL: "/boxes/" + url.PathEscape(b.Name) + "/live?in=page&back=" + url.QueryEscape(back)}
	if tl > 0 {
		l.LiveURL += "&tl=" + strconv.Itoa(tl)
	}
	l.Requests = s.approvalItems(r, b.ID, back)
	return l, nil
}

// doneWords is what a settled card says in the live region: the box log's
// newest event.
func (s *Server) doneWords(r *http.Request, b *snapshots.Box) string {
	evs, err := s.opts.Core.Boxes().BoxLog(r.Context(), snapshots.Owner(), b.ID, 1)
	if err != nil || len(evs) == 0 {
		return b.Name + ": done."
	}
	return snapshots.EventLine(b.Name, evs[0])
}

// card builds a box's Snapshots card: the count, Take snapshot with why it
// is refused, the rows, a running restore's step, and what goes with the
// box.
func (s *Server) card(r *http.Request, b *snapshots.Box, back string) (boxCard, error) {
	ctx := r.Context()
	list, err := s.opts.Core.List(ctx, snapshots.Owner(), snapshots.ListQuery{Box: b.ID})
	if err != nil {
		return boxCard{}, err
	}
	rc := s.rowContext(r, back)
	rc.threads.knowBoxes(list)
	var bs snapshots.BoxSnapshots
	if len(list) > 0 {
		bs = list[0]
	} else {
		bs = snapshots.BoxSnapshots{Box: b}
	}
	c := boxCard{Back: back, Screen: b.HasScreen}
	live := "/boxes/" + url.PathEscape(b.Name) + "/live?in=page&back=" + url.QueryEscape(back)
	// The card lists the saved snapshots; the automatic ones are on the
	// page's timeline.
	var saved []*snapshots.Snapshot
	for _, sn := range bs.Snapshots {
		if !sn.Automatic {
			saved = append(saved, sn)
		}
	}
	c.Group = s.group(bs, saved, rc, live)
	for _, sn := range bs.Snapshots {
		if sn.Automatic && (sn.State == snapshots.StateTaking || sn.State == snapshots.StateDeleting || len(bs.Pins[sn.ID]) > 0) {
			c.Group.Busy = true // the timeline's work shows on the card's poll
		}
	}
	if b.ReleasedAt == nil {
		c.Group.Now = s.nowOf(rc, b, bs.Snapshots, c.Group.restores)
	}
	settings, _ := s.opts.Core.Settings(ctx)
	counts := snapshots.CountOf(saved)
	be, _ := s.opts.Core.BackendOf(b)
	snapping := s.opts.Core.Snapshotting(b)
	if snapping == nil {
		c.NoTake = true
		c.None = snapshots.NoSnapshotsWords(be.Label)
		return c, nil
	}
	holds := "disk"
	if snapping.OffersMemory() {
		holds = "disk, or disk and memory"
	}
	c.Count = counts.Words() + " · " + counts.LimitWords(settings.PerBox) + " · " + holds + " · " + s.whereWords(b)
	c.Take = action{Label: "Take snapshot", Href: "/boxes/" + url.PathEscape(b.Name) + "/take?back=" + url.QueryEscape(back)}
	if b.State == snapshots.BoxTrashed {
		c.Take.Why = snapshots.InTrashWords(b.Name)
	} else if b.ReleasedAt != nil || b.State != snapshots.BoxReady {
		c.Take.Why = snapshots.ReleasedTakesNoneWords(b.Name)
	} else if _, _, plan, err := s.opts.Core.Plan(ctx, snapshots.Owner(), b.ID, ""); err != nil {
		c.Take.Why = refusalWords(err)
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
			if op, err := s.opts.Core.Operation(ctx, snapshots.Owner(), p.Operation); err == nil && op.State == snapshots.OpRunning {
				c.Progress = snapshots.StepWords(op.Step) + "…"
				c.Group.Busy = true
				c.Group.Announce = fmt.Sprintf("Restoring %s: %s.", b.Name, strings.ToLower(snapshots.StepWords(op.Step)))
			}
		}
	}
	if c.Progress == "" {
		// boxsnap's own work on the box, in place of a lock it holds
		// (the core's lock notice is nil meanwhile).
		if op, err := s.opts.Core.RunningOn(ctx, b); err == nil && op != nil {
			c.Progress = snapshots.StepWords(op.Step) + "…"
		}
	}
	return c, nil
}

// notices reads a box's log for its restore's notice (24 hours, with Undo)
// and for operations boxsnap could not confirm (with Check now).
func (s *Server) notices(r *http.Request, b *snapshots.Box) []notice {
	ctx := r.Context()
	events, err := s.opts.Core.Boxes().BoxLog(ctx, snapshots.Owner(), b.ID, 100)
	if err != nil {
		return nil
	}
	tz := s.opts.Core.TimeZone(ctx)
	now := time.Now()
	var out []notice
	seen := map[string]bool{}
	restoreShown := false
	var rs *restores
	for _, ev := range events {
		if ev.OperationID != nil && !seen[*ev.OperationID] {
			seen[*ev.OperationID] = true
			if op, err := s.opts.Core.Operation(ctx, snapshots.Owner(), *ev.OperationID); err == nil && op.State == snapshots.OpUnknown {
				out = append(out, notice{Words: snapshots.UnknownWords(b.Name, op), Amber: true, CheckOp: op.ID})
			}
		}
		if restoreShown || now.Sub(ev.At) > snapshots.RestoreNoticeFor {
			continue
		}
		switch ev.Kind {
		case snapshots.EvRestored:
			restoreShown = true
			var res snapshots.RestoreResult
			if err := json.Unmarshal(ev.Data, &res); err != nil {
				s.opts.Logger.Warn("a restore's event data", "box", b.Name, "event", ev.ID, "err", err)
			}
			thread := ""
			if ev.ActorThread != nil {
				if t, err := s.opts.Core.Boxes().Thread(ctx, snapshots.Owner(), *ev.ActorThread); err == nil {
					thread = t.Title
				}
			}
			why := ""
			if ev.ActorWhy != nil {
				why = *ev.ActorWhy
			}
			taken := ""
			if sn, _, err := s.opts.Core.Snapshot(ctx, snapshots.Owner(), res.Target); err == nil {
				taken = ", taken " + whenAt(sn.TakenAt, now, tz)
				// An undo is named for its restore; say what it holds.
				if sn.UndoOf != nil {
					if rs == nil {
						v := s.restoresOf(s.rowContext(r, ""), b)
						rs = &v
					}
					if was, ok := rs.byOp[*sn.UndoOf]; ok {
						taken = fmt.Sprintf(" (%s as it was at %s, before restoring to ‘%s’)", b.Name, sn.TakenAt.In(tz).Format("15:04"), was.TargetName)
					}
				}
			}
			n := notice{Words: fmt.Sprintf("Restored at %s to ‘%s’%s, %s.", ev.At.In(tz).Format("15:04"), res.TargetName, taken,
				snapshots.ByWords(ev.ActorKind, thread, why))}
			if res.Undo != "" {
				if _, _, err := s.opts.Core.Snapshot(ctx, snapshots.Owner(), res.Undo); err == nil {
					n.Words += fmt.Sprintf(" Undo restores ‘%s’, %s as it was just before.", res.UndoName, b.Name)
					n.UndoName = res.UndoName
					n.UndoHref = fmt.Sprintf("/boxes/%s/snapshots/%s/restore?back=%s", url.PathEscape(b.Name), res.Undo,
						url.QueryEscape("/boxes/"+b.Name))
				} else {
					n.Words += fmt.Sprintf(" Its undo, ‘%s’, was deleted, so it cannot be undone.", res.UndoName)
				}
			}
			out = append(out, n)
		case snapshots.EvRestoreFailed:
			restoreShown = true
			out = append(out, notice{Words: snapshots.UnfinishedWords("The restore at "+ev.At.In(tz).Format("15:04"), ev.Words, ""), Amber: true})
		}
	}
	return out
}

// showBox answers a box's page with its Snapshots card and notices.
func (s *Server) showBox(w http.ResponseWriter, r *http.Request) {
	name := chi.URLParam(r, "box")
	f := s.forkingOf(r, name)
	b, err := s.opts.Core.Box(r.Context(), snapshots.Owner(), name)
	if f != nil && (err != nil || f.Busy || f.Failed != "") {
		// The new box's page opens at once, starting: the fork's progress
		// until its operation ends.
		p := boxPage{Page: views.Page{Title: name, SignedIn: true, Nav: "boxes"}, Forking: f}
		s.render(w, r, http.StatusOK, "box", p)
		return
	}
	if err != nil {
		s.refused(w, r, err)
		return
	}
	back := "/boxes/" + b.Name
	l, err := s.boxLive(r, b, back)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	rc := s.rowContext(r, back)
	h := s.head(b, rc)
	shown, _ := strconv.Atoi(r.URL.Query().Get("log"))
	p := boxPage{Page: views.Page{Title: b.Name, SignedIn: true, Nav: "boxes", Flash: s.flash(w, r)}, Box: b, Head: h, Live: l,
		Facts: s.facts(r, b, h), History: s.historyOf(rc, b, shown)}
	p.Undo, _ = s.opts.Core.NewestUndo(r.Context(), snapshots.Owner(), b.ID)
	if b.State == snapshots.BoxTrashed {
		if e, err := s.opts.Core.Boxes().TrashOf(r.Context(), snapshots.Owner(), b.ID); err == nil {
			p.Trashed = fmt.Sprintf("Released: it goes %s with its snapshots that nobody kept. Restore it to use it again, with its history.",
				e.Until.In(s.opts.Core.TimeZone(r.Context())).Format("Mon 2 Jan 15:04"))
		}
	}
	s.render(w, r, http.StatusOK, "box", p)
}

// showBoxLive answers the fragment a busy card polls about once a second:
// the box page's card, or the box's card on the Snapshots tab. When nothing
// runs, the fragment it returns polls no more.
func (s *Server) showBoxLive(w http.ResponseWriter, r *http.Request) {
	if f := s.forkingOf(r, chi.URLParam(r, "box")); f != nil {
		w.Header().Set("Cache-Control", "no-store")
		s.renderBlock(w, http.StatusOK, "box", "forking", f)
		return
	}
	b, err := s.opts.Core.Box(r.Context(), snapshots.Owner(), chi.URLParam(r, "box"))
	if err != nil {
		s.refused(w, r, err)
		return
	}
	back := safeNext(r.URL.Query().Get("back"))
	l, err := s.boxLive(r, b, back)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	if r.URL.Query().Get("in") == "tab" {
		g := l.Card.Group
		g.Dense = true
		g.LiveURL = "/boxes/" + url.PathEscape(b.Name) + "/live?in=tab&back=" + url.QueryEscape(back)
		if r.URL.Query().Get("select") == "1" {
			g.LiveURL += "&select=1"
		}
		if !g.Busy {
			g.Done = s.doneWords(r, b)
		}
		s.renderBlock(w, http.StatusOK, "box", "group", g)
		return
	}
	if !l.Busy {
		l.Done = s.doneWords(r, b)
	}
	s.renderBlock(w, http.StatusOK, "box", "boxlive", l)
}

// headWords says the box's head, the snapshot its files descend from: it
// moves forward by itself on a take and back only by a restore.
func (s *Server) headWords(r *http.Request, b *snapshots.Box) string {
	if b.HeadID == nil {
		return "None yet: its first snapshot becomes its head."
	}
	sn, _, err := s.opts.Core.Snapshot(r.Context(), snapshots.Owner(), *b.HeadID)
	if err != nil {
		return "A deleted snapshot: its files descend from it."
	}
	return fmt.Sprintf("‘%s’: its files descend from it.", sn.Name)
}

// sizeOfBox says a box's size in GiB, as 069 says it: "4 cores · 8 GiB
// memory · 40 GiB disk", or "" when its backend does not say.
func sizeOfBox(sz *providers.BoxSize) string {
	if sz == nil {
		return ""
	}
	var parts []string
	if sz.Cores > 0 {
		parts = append(parts, plural(sz.Cores, "core", "cores"))
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
	return strings.Join(parts, " · ")
}
