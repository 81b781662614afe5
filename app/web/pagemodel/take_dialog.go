package pagemodel

import (
	"fmt"
	"net/url"
	"time"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/providers"
)

// TakeDialog builds Take snapshot's dialog from the plan: a name (the time
// by default), a note, "With its memory" where the plan offers it, the time, pause and
// space, what it holds, the count, the picture and the price.
func (dlg *DialogBuilder) TakeDialog(r Request, boxRef string) (Dialog, error) {
	ctx := r.Context()
	b, _, plan, err := dlg.core.Plan(ctx, snapshots.Owner(), boxRef, "")
	if b == nil {
		return Dialog{}, err
	}
	d := Dialog{Kind: "take", Title: fmt.Sprintf("Take a snapshot of %s", b.Name), Back: backOf(r, b.Name),
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
		d.Disabled, d.Error = true, RefusalWords(err)
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
		line += fmt.Sprintf(" Up to %s more %s.", snapshots.GB(*plan.Take.AddsBytes), dlg.rows.OnHost(b))
	}
	d.Lines = append(d.Lines, line)
	holds := "It holds the disk: files, installed apps and settings, not its running apps."
	if snapping.Excludes != "" {
		holds += " It leaves out " + snapping.Excludes + "."
	}
	d.Lines = append(d.Lines, holds)
	// Memory is offered where the plan says this guest can give it now (a
	// QEMU guest that is stopped has none), as the take would refuse it.
	if snapping.OffersMemory() && plan.Take.MemoryBytes != nil {
		d.OfferMemory = true
		d.MemoryLine = "With its memory: its running apps come back too."
		if plan.Take.MemoryAbout > 0 {
			d.MemoryLine += " " + aboutWords(plan.Take.MemoryAbout) + "."
		}
		if plan.Take.MemoryBytes != nil {
			d.MemoryLine += fmt.Sprintf(" Up to %s more %s.", snapshots.GiB(*plan.Take.MemoryBytes), dlg.rows.OnHost(b))
		}
	}
	settings, _ := dlg.core.Settings(ctx)
	if list, err := dlg.core.List(ctx, snapshots.Owner(), snapshots.ListQuery{Box: b.ID}); err == nil && len(list) > 0 {
		d.Lines = append(d.Lines, TakeCountWords(b.Name, snapshots.CountOf(list[0].Snapshots).ToLimit, settings.PerBox))
	}
	if b.HasScreen && settings.Pictures {
		d.Lines = append(d.Lines, "A small picture of its screen is kept with it.")
	}
	d.Lines = append(d.Lines, CostsWords(snapping.Price, ""))
	d.Fingerprint = fingerprint(b, nil, nil)
	d.RequestID = snapshots.NewID("rq")
	return d, nil
}
