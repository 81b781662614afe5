package web

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/fork"
	"github.com/boxsnap/boxsnap/providers"
)

// whereThread and whereMachine are the Fork dialog's two places: the
// person forks into the box's thread, or as a machine of their own.
const (
	whereThread  = "thread"
	whereMachine = "machine"
)

// forkDialog builds Fork's dialog from the plan: the new box's
// name, where it goes, its size, its time and space, and what a fork is.
func (dlg *dialogBuilder) forkDialog(r *http.Request, boxRef, ref string) (dialog, error) {
	ctx := r.Context()
	b, sn, plan, err := dlg.core.Plan(ctx, snapshots.Owner(), boxRef, ref)
	if b == nil || sn == nil {
		if err == nil {
			err = fmt.Errorf("fork dialog: no snapshot %s", ref)
		}
		return dialog{}, err
	}
	tz := dlg.core.TimeZone(ctx)
	d := dialog{Kind: "fork", Title: fmt.Sprintf("Fork %s from ‘%s’", b.Name, sn.Name), Back: backOf(r, b.Name),
		Action: fmt.Sprintf("/boxes/%s/snapshots/%s/fork", url.PathEscape(b.Name), sn.ID), Submit: "Fork",
		RequestID: snapshots.NewID("rq"), Fingerprint: fingerprint(b, sn, nil)}
	d.NamePlaceholder = dlg.forks.ForkName(r.Context(), b.Name)
	d.Count, d.MaxCount = 1, dlg.forks.MaxCount()
	switch {
	case err != nil:
		d.Disabled, d.Error = true, refusalWords(err)
		return d, nil
	case !plan.Fork.OK:
		d.Disabled, d.Error = true, plan.Fork.Why
		if d.Error == "" {
			d.Error = snapshots.CannotBeForkedWords(sn.Name, dlg.rows.whereWords(b))
		}
		return d, nil
	}
	if err := snapshots.MayAct(snapshots.Owner(), snapshots.ActFork, b, sn); err != nil {
		d.Disabled, d.Error = true, refusalWords(err)
		return d, nil
	}
	// A snapshot taken without the identity reset never forks, since two
	// boxes would share one identity (the core refuses it too; the dialog
	// says why before a post).
	if sn.ForkSafe == nil || *sn.ForkSafe <= 0 {
		d.Disabled, d.Error = true, providers.NoResetWords(b.Name)
		return d, nil
	}
	// Where it goes: the box's thread, or as one of the person's machines;
	// a released box's kept snapshot, and a machine's, only the latter.
	if b.ThreadID != nil && b.ReleasedAt == nil && b.State == snapshots.BoxReady {
		title := *b.ThreadID
		if t, terr := dlg.boxes.Thread(ctx, snapshots.Owner(), *b.ThreadID); terr == nil {
			title = t.Title
		}
		d.Places = []place{{Value: whereThread, Text: "In " + title + ", as " + b.Name + " is", Checked: true},
			{Value: whereMachine, Text: "As one of your machines"}}
	} else {
		d.Lines = append(d.Lines, "It goes: as one of your machines.")
	}
	// Its size is the snapshot's (no larger size is offered yet), read
	// from the snapshot's config where the plan has it.
	size := "Its size: as the snapshot"
	if sz := plan.Restore.SizeBack; sz != nil && (sz.Cores > 0 || sz.MemoryBytes > 0) {
		size = fmt.Sprintf("Its size: %d cores and %s memory", sz.Cores, snapshots.GiB(sz.MemoryBytes))
		if sz.DiskBytes > 0 {
			size = fmt.Sprintf("Its size: %d cores, %s memory and %s disk", sz.Cores, snapshots.GiB(sz.MemoryBytes), snapshots.GiB(sz.DiskBytes))
		}
		size += ", as the snapshot"
	} else if plan.Fork.Bytes != nil {
		size += ", " + snapshots.GB(*plan.Fork.Bytes) + " of files"
	}
	d.Lines = append(d.Lines, size+".")
	line := aboutWords(plan.Fork.About)
	if plan.Fork.Bytes != nil {
		be, _ := dlg.core.BackendOf(b)
		line += fmt.Sprintf(", and %s on %s", snapshots.GB(*plan.Fork.Bytes), hostName(be, b))
	}
	d.Lines = append(d.Lines, line+".")
	at := sn.TakenAt.In(tz).Format("15:04")
	if time.Since(sn.TakenAt) > 6*24*time.Hour {
		at = sn.TakenAt.In(tz).Format("2 Jan 15:04")
	}
	d.After = append(d.After, fmt.Sprintf("A new box with %s's files as they were at %s. It gets its own identity and keys, and never acts as %s. "+
		"Everything else on its disk comes with it: project secrets, signed-in browsers and keychains. It starts fresh: no apps are running.",
		b.Name, at, b.Name))
	if s := dlg.core.Snapshotting(b); s != nil && s.Price != nil {
		if s.Price.Known {
			d.After = append(d.After, "Its snapshots cost "+snapshots.PriceWords(s.Price)+".")
		} else {
			d.After = append(d.After, "The price of its snapshots is unknown.")
		}
	}
	return d, nil
}

// place is one choice of where a fork goes.
type place struct {
	Value, Text string
	Checked     bool
}

func (s *Server) showForkDialog(w http.ResponseWriter, r *http.Request) {
	d, err := s.dialogs.forkDialog(r, chi.URLParam(r, "box"), chi.URLParam(r, "id"))
	if err != nil {
		s.refused(w, r, err)
		return
	}
	s.renderDialog(w, r, http.StatusOK, d)
}

// forkSnapshot forks and opens the new box's page, starting: it shows the
// fork's progress until its operation ends.
func (s *Server) forkSnapshot(w http.ResponseWriter, r *http.Request) {
	d, box, id, ok := s.postedDialog(w, r, s.dialogs.forkDialog)
	if !ok {
		return
	}
	name := strings.TrimSpace(r.PostFormValue("name"))
	if count, many, err := forkCount(r.PostFormValue("count"), d.MaxCount); err != nil || many {
		forkManyPost{s}.post(w, r, d, box, id, name, count, err)
		return
	}
	if name == "" {
		name = d.NamePlaceholder
	}
	op, err := s.opts.Forks.Fork(r.Context(), snapshots.Owner(), fork.ForkRequest{Box: box, Snapshot: id, Name: name,
		AsMachine: r.PostFormValue("where") == whereMachine, RequestID: r.PostFormValue("request")})
	if err != nil {
		d.Error, d.Name = refusalWords(err), name
		s.renderDialog(w, r, statusOf(err), d)
		return
	}
	next := fmt.Sprintf("/boxes/%s?fork=%s", url.PathEscape(s.forkTarget(op, name)), url.QueryEscape(op.ID))
	if r.Header.Get("HX-Request") == "true" {
		w.Header().Set("HX-Redirect", next)
		w.WriteHeader(http.StatusOK)
		return
	}
	http.Redirect(w, r, next, http.StatusSeeOther)
}

// forkTarget is the new box's name as the fork's operation records it.
func (s *Server) forkTarget(op *snapshots.Operation, fallback string) string {
	if p, err := s.opts.Forks.Kinds().Fork.Params(op); err == nil && p.Name != "" {
		return p.Name
	}
	return fallback
}

// forking is a new box's page while its fork runs: the source, the
// snapshot and the step, polled until the operation ends.
type forking struct {
	Name, From, Step, Failed, LiveURL, Goto string
	Busy                                    bool
}

// forkingOf reads the fork operation named by ?fork= for box name: nil when
// there is none, or it is not this box's.
func (s *Server) forkingOf(r *http.Request, name string) *forking {
	id := r.URL.Query().Get("fork")
	if id == "" {
		return nil
	}
	ctx := r.Context()
	op, err := s.opts.Core.Operation(ctx, snapshots.Owner(), id)
	if err != nil || op.Kind != snapshots.OpFork || s.forkTarget(op, "") != name {
		return nil
	}
	f := &forking{Name: name, LiveURL: fmt.Sprintf("/boxes/%s/live?fork=%s", url.PathEscape(name), url.QueryEscape(op.ID))}
	source := "its source"
	if op.Target != nil {
		if sn, src, err := s.opts.Core.Snapshot(ctx, snapshots.Owner(), *op.Target); err == nil {
			f.From = fmt.Sprintf("from %s, ‘%s’", src.Name, sn.Name)
			source = src.Name
		}
	}
	switch op.State {
	case snapshots.OpRunning:
		f.Busy = true
		switch op.Step {
		case "fork":
			f.Step = "Copying its files"
		case string(providers.StepStart):
			f.Step = "Starting"
		case snapshots.StepWaiting, snapshots.StepQueued:
			f.Step = fmt.Sprintf("Waiting for %s's earlier operation", source)
		default:
			f.Step = snapshots.StepWords(op.Step)
		}
	case snapshots.OpFailed:
		why := ""
		if op.Error != nil {
			why = *op.Error
		}
		f.Failed = snapshots.UnfinishedWords("The fork", why, "")
	case snapshots.OpUnknown:
		f.Failed = snapshots.UnknownWords(name, op)
	default:
		f.Goto = "/boxes/" + url.PathEscape(name)
	}
	return f
}

// forkedFromWords is a fork's fact: "Forked from amber-fox, ‘before the
// migration’ (yesterday 23:39)".
func forkedFromWords(raw json.RawMessage, now time.Time, tz *time.Location) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var f struct {
		BoxName      string    `json:"boxName"`
		SnapshotName string    `json:"snapshotName"`
		TakenAt      time.Time `json:"takenAt"`
	}
	if json.Unmarshal(raw, &f) != nil || f.BoxName == "" {
		return ""
	}
	when := strings.Replace(whenAt(f.TakenAt, now, tz), " at ", " ", 1)
	return fmt.Sprintf("Forked from %s, ‘%s’ (%s)", f.BoxName, f.SnapshotName, when)
}
