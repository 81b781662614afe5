package web

import (
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/take"
	"github.com/boxsnap/boxsnap/providers"
)

// takeDialog builds Take snapshot's dialog from the plan: a name (the time
// by default), a note, "With its memory" where offered, the time, pause and
// space, what it holds, the count, the picture and the price.
func (dlg *dialogBuilder) takeDialog(r *http.Request, boxRef string) (dialog, error) {
	ctx := r.Context()
	b, _, plan, err := dlg.core.Plan(ctx, snapshots.Owner(), boxRef, "")
	if b == nil {
		return dialog{}, err
	}
	d := dialog{Kind: "take", Title: fmt.Sprintf("Take a snapshot of %s", b.Name), Back: backOf(r, b.Name),
		Action: "/boxes/" + url.PathEscape(b.Name) + "/take", Submit: "Take snapshot"}
	tz := dlg.core.TimeZone(ctx)
	d.NamePlaceholder = snapshots.DefaultName(time.Now(), tz)
	snapping := dlg.core.Snapshotting(b)
	be, _ := dlg.core.BackendOf(b)
	switch {
	case snapping == nil:
		d.Disabled, d.Error = true, snapshots.NoSnapshotsWords(be.Label)
		return d, nil
	case err != nil:
		d.Disabled, d.Error = true, refusalWords(err)
		return d, nil
	case plan.Locked != nil:
		d.Disabled, d.Error = true, snapshots.LockedWords(be.Label, b.Name, plan.Locked.Lock, plan.Locked.Fix)
		return d, nil
	case !plan.Take.OK:
		d.Disabled, d.Error = true, plan.Take.Why
		return d, nil
	}
	line := aboutWords(plan.Take.About) + "."
	if plan.Take.PauseAbout > 0 || snapping.WhileRunning == providers.WhileRunningPauses {
		line += fmt.Sprintf(" %s pauses for a moment.", b.Name)
	}
	if plan.Take.AddsBytes != nil && *plan.Take.AddsBytes > 0 {
		line += fmt.Sprintf(" Up to %s more %s.", snapshots.GB(*plan.Take.AddsBytes), dlg.rows.onHost(b))
	}
	d.Lines = append(d.Lines, line)
	holds := "It holds the disk: files, installed apps and settings, not its running apps."
	if snapping.Excludes != "" {
		holds += " It leaves out " + snapping.Excludes + "."
	}
	d.Lines = append(d.Lines, holds)
	if snapping.OffersMemory() {
		d.OfferMemory = true
		d.MemoryLine = "With its memory: its running apps come back too."
		if plan.Take.MemoryAbout > 0 {
			d.MemoryLine += " " + aboutWords(plan.Take.MemoryAbout) + "."
		}
		if plan.Take.MemoryBytes != nil {
			d.MemoryLine += fmt.Sprintf(" Up to %s more %s.", snapshots.GiB(*plan.Take.MemoryBytes), dlg.rows.onHost(b))
		}
	}
	settings, _ := dlg.core.Settings(ctx)
	if list, err := dlg.core.List(ctx, snapshots.Owner(), snapshots.ListQuery{Box: b.ID}); err == nil && len(list) > 0 {
		d.Lines = append(d.Lines, snapshots.TakeCountWords(b.Name, snapshots.CountOf(list[0].Snapshots).ToLimit, settings.PerBox))
	}
	if b.HasScreen && settings.Pictures {
		d.Lines = append(d.Lines, "A small picture of its screen is kept with it.")
	}
	d.Lines = append(d.Lines, snapshots.CostsWords(snapping.Price, ""))
	d.Fingerprint = fingerprint(b, nil, nil)
	d.RequestID = snapshots.NewID("rq")
	return d, nil
}

func (s *Server) showTakeDialog(w http.ResponseWriter, r *http.Request) {
	d, err := s.dialogs.takeDialog(r, chi.URLParam(r, "box"))
	if err != nil {
		s.refused(w, r, err)
		return
	}
	s.renderDialog(w, r, http.StatusOK, d)
}

// takeSnapshot takes a snapshot; its row appears at once, taking.
func (s *Server) takeSnapshot(w http.ResponseWriter, r *http.Request) {
	box := chi.URLParam(r, "box")
	_, sn, err := s.opts.Take.Take(r.Context(), snapshots.Owner(), take.TakeRequest{Box: box, Name: r.PostFormValue("name"),
		Note: r.PostFormValue("note"), Memory: r.PostFormValue("memory") == "1", RequestID: r.PostFormValue("request")})
	if err != nil {
		d, derr := s.dialogs.takeDialog(r, box)
		if derr != nil {
			s.refused(w, r, err)
			return
		}
		d.Error, d.Name, d.Note = refusalWords(err), r.PostFormValue("name"), r.PostFormValue("note")
		s.renderDialog(w, r, statusOf(err), d)
		return
	}
	s.done(w, r, backOf(r, box), fmt.Sprintf("Taking ‘%s’.", sn.Name))
}
