package pagemodel

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/fork"
	"github.com/boxsnap/boxsnap/providers"
)

// whereThread and whereMachine are the Fork dialog's two places: the
// person forks into the box's thread, or as a machine of their own.
const (
	WhereThread  = "thread"
	WhereMachine = "machine"
)

// ForkDialog builds Fork's dialog from the plan: the new box's
// name, where it goes, its size, its time and space, and what a fork is.
func (dlg *DialogBuilder) ForkDialog(r Request, boxRef, ref string) (Dialog, error) {
	ctx := r.Context()
	// A box another host owns has no folder here to plan on: the fork
	// lands on this host, from the snapshot's content in the content store.
	b, sn, plan, owner, err := dlg.forks.Plan(ctx, snapshots.Owner(), boxRef, ref)
	if b == nil || sn == nil {
		if err == nil {
			err = fmt.Errorf("fork dialog: no snapshot %s", ref)
		}
		return Dialog{}, err
	}
	tz := dlg.core.TimeZone(ctx)
	d := Dialog{Kind: "fork", Title: fmt.Sprintf("Fork %s from ‘%s’", b.Name, sn.Name), Back: backOf(r, b.Name),
		Action: fmt.Sprintf("/boxes/%s/snapshots/%s/fork", url.PathEscape(b.Name), sn.ID), Submit: "Fork",
		RequestID: snapshots.NewID("rq"), Fingerprint: fingerprint(b, sn, nil)}
	d.NamePlaceholder = dlg.forks.ForkName(r.Context(), b.Name)
	d.Count, d.MaxCount = 1, dlg.forks.MaxCount()
	switch {
	case err != nil:
		d.Disabled, d.Error = true, RefusalWords(err)
		return d, nil
	case !plan.Fork.OK:
		d.Disabled, d.Error = true, plan.Fork.Why
		if d.Error == "" {
			d.Error = snapshots.CannotBeForkedWords(sn.Name, dlg.rows.WhereWords(b))
		}
		return d, nil
	}
	if err := snapshots.MayAct(snapshots.Owner(), snapshots.ActFork, b, sn); err != nil {
		d.Disabled, d.Error = true, RefusalWords(err)
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
		d.Places = []Place{{Value: WhereThread, Text: "In " + title + ", as " + b.Name + " is", Checked: true},
			{Value: WhereMachine, Text: "As one of your machines"}}
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
	if owner != "" {
		d.Lines = append(d.Lines, fork.LandsHereWords(b.Name, owner, dlg.forks.This()))
	}
	line := aboutWords(plan.Fork.About)
	if plan.Fork.Bytes != nil {
		be, _ := dlg.core.BackendOf(b)
		line += fmt.Sprintf(", and %s on %s", snapshots.GB(*plan.Fork.Bytes), hostName(be, b))
	}
	if owner == "" {
		d.Lines = append(d.Lines, line+".")
	}
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

// Place is one choice of where a fork goes.
type Place struct {
	Value, Text string
	Checked     bool
}

// ForkedFromWords is a fork's fact: "Forked from amber-fox, ‘before the
// migration’ (yesterday 23:39)".
func ForkedFromWords(raw json.RawMessage, now time.Time, tz *time.Location) string {
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
	when := strings.Replace(WhenAt(f.TakenAt, now, tz), " at ", " ", 1)
	return fmt.Sprintf("Forked from %s, ‘%s’ (%s)", f.BoxName, f.SnapshotName, when)
}
