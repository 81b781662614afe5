package pagemodel

import (
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/restore"
	"github.com/boxsnap/boxsnap/providers"
)

// RestoreDialog builds the restore dialog: when it goes back to,
// everything that goes (the guard), the size it goes back to, the undo line
// that only the owner can untick, and the button's three wordings.
func (dlg *DialogBuilder) RestoreDialog(r Request, boxRef, ref string) (Dialog, error) {
	ctx := r.Context()
	b, sn, plan, err := dlg.core.Plan(ctx, snapshots.Owner(), boxRef, ref)
	if b == nil || sn == nil {
		if err == nil {
			err = fmt.Errorf("restore dialog: no snapshot %s", ref)
		}
		return Dialog{}, err
	}
	tz := dlg.core.TimeZone(ctx)
	now := time.Now()
	d := Dialog{Kind: "restore", Title: fmt.Sprintf("Restore %s to ‘%s’?", b.Name, sn.Name), Back: backOf(r, b.Name),
		Action: fmt.Sprintf("/boxes/%s/snapshots/%s/restore", url.PathEscape(b.Name), sn.ID), RequestID: snapshots.NewID("rq")}
	be, _ := dlg.core.BackendOf(b)
	guard := dlg.restores.Guard(ctx, snapshots.Owner(), b)
	d.Fingerprint = fingerprint(b, sn, guard)
	switch {
	case err != nil:
		d.Disabled, d.Error = true, RefusalWords(err)
		return d, nil
	case dlg.rows.RestoresOff(ctx, b):
		d.Disabled, d.Error = true, restore.ExecutionRestoresOffWords
		return d, nil
	case plan.Locked != nil:
		d.Disabled, d.Error = true, snapshots.LockedWords(be.Label, b.Name, plan.Locked.Lock, plan.Locked.Fix)
		return d, nil
	case plan.Restore.Way == providers.WayNone || plan.Restore.Why != "":
		d.Disabled, d.Error = true, plan.Restore.Why
		if d.Error == "" {
			d.Error = snapshots.CannotBeRestoredOnWords(b.Name, be.Label)
		}
		return d, nil
	}
	var list []snapshots.BoxSnapshots
	if l, err := dlg.core.List(ctx, snapshots.Owner(), snapshots.ListQuery{Box: b.ID}); err == nil && len(l) > 0 {
		list = l
		if werr := snapshots.Eligible(sn, snapshots.ChangeRestore, list[0].Pins[sn.ID], now, tz); werr != nil {
			d.Disabled, d.Error = true, RefusalWords(werr)
			return d, nil
		}
	}
	dlg.restoreLines(r, &d, b, sn, plan, list, now, tz)
	d.Goes = guard
	dlg.restoreUndo(r, &d, b, plan, be, now, tz)
	restoreSubmit(&d, b, sn, guard)
	return d, nil
}

// restoreLines says what a restore does: when it goes back to and what
// goes with it, what changed since, the size it goes back to, what it
// leaves out, and how a held copy's undo comes back.
func (dlg *DialogBuilder) restoreLines(r Request, d *Dialog, b *snapshots.Box, sn *snapshots.Snapshot, plan providers.SnapshotPlan,
	list []snapshots.BoxSnapshots, now time.Time, tz *time.Location) {
	ctx := r.Context()
	when := WhenAt(sn.TakenAt, now, tz)
	first := fmt.Sprintf("It goes back to %s, %s ago. Everything on its disk since then goes: files, installed apps and settings.",
		when, agoWords(now.Sub(sn.TakenAt)))
	if sn.Holds == string(providers.HoldsDiskAndMemory) {
		// Its memory replaces the memory it has now: the processes running
		// in it end (a hard stop first, on QEMU and Proxmox).
		first += fmt.Sprintf(" Every process running in it now ends. %s comes back running, as it was then, with the credentials its apps held then. Undo brings back its files, not its running apps.", b.Name)
	} else if plan.Restore.RestartsProcesses {
		first += fmt.Sprintf(" %s restarts, so every process in it ends.", b.Name)
	}
	first += " What it did to the world since stays done."
	d.Lines = append(d.Lines, first)
	if cmp, err := dlg.contents.RestorePreview(ctx, snapshots.Owner(), sn.ID); err == nil && cmp != nil {
		d.Changes = cmp.Words
		d.ChangesHref = fmt.Sprintf("/boxes/%s/snapshots/%s/compare", url.PathEscape(b.Name), sn.ID)
	}
	if sz := plan.Restore.SizeBack; sz != nil && (sz.Cores > 0 || sz.MemoryBytes > 0) {
		d.After = append(d.After, fmt.Sprintf("%s goes back to %d cores and %s memory, as it was then.", b.Name, sz.Cores, snapshots.GiB(sz.MemoryBytes)))
	}
	if plan.Restore.Excludes != "" {
		d.After = append(d.After, "It leaves out "+plan.Restore.Excludes+".")
	}
	// A held copy's undo (ZFS's) comes back by a swap: say what undoing
	// does, in the restore's dialog and in the undo's own.
	if len(list) > 0 && (plan.Restore.Undo == providers.UndoHeldCopy || (sn.UndoOf != nil && sn.Guest == "held-copy")) {
		d.After = append(d.After, swapWords(list[0].Snapshots))
	}
}

// restoreUndo is the undo line: how and when the undo is taken, its name,
// ticked and locked where the core refuses a restore without one, or why
// no undo can be taken.
func (dlg *DialogBuilder) restoreUndo(r Request, d *Dialog, b *snapshots.Box, plan providers.SnapshotPlan, be snapshots.Backend,
	now time.Time, tz *time.Location) {
	ctx := r.Context()
	settings, _ := dlg.core.Settings(ctx)
	undoName := snapshots.UndoName(now, tz)
	if plan.Restore.Undo != providers.UndoNone {
		d.UndoOffered = true
		switch plan.Restore.Undo {
		case providers.UndoHeldCopy:
			d.UndoLine = fmt.Sprintf("Copy %s once stopped, so you can undo this: %s", b.Name, strings.ToLower(aboutWords(plan.Restore.UndoAbout)))
			if plan.Restore.UndoBytes != nil {
				d.UndoLine += fmt.Sprintf(" and %s %s", snapshots.GB(*plan.Restore.UndoBytes), dlg.rows.WhereWords(b))
			}
			d.UndoLine += "."
		default:
			// The backend's capture order says when the undo is taken.
			when := ", once stopped"
			if !restore.UndoOnceStopped(plan) {
				when = " first"
			}
			d.UndoLine = fmt.Sprintf("Take a snapshot of it%s, so you can undo this. %s.", when, aboutWords(plan.Restore.UndoAbout))
			if when == " first" {
				// Taken while it runs: what it writes until its stop is in
				// neither the undo nor the restored box.
				d.UndoLine += fmt.Sprintf(" What %s writes between that snapshot and its stop, a moment later, is in neither.", b.Name)
			}
		}
		d.UndoLine += fmt.Sprintf(" Named ‘%s’. Undos do not count against the %d.", undoName, settings.PerBox)
		// Ticked and locked where the core refuses a restore without one.
		if restore.ThreadsRunOn(snapshots.Owner(), b) {
			d.UndoLocked = true
			d.UndoLine += " " + snapshots.AlwaysWithUndoWords(b.Name)
		}
	} else {
		d.NoUndo = true
		d.After = append(d.After, strings.TrimSuffix(snapshots.NoUndoCanBeTakenWords(b.Name, be.Label), ".")+": only a restore without undo can go on.")
	}
}

// restoreSubmit is the button's three wordings: Restore, Restore anyway
// past the guard, Undo for an undo, and Restore without undo.
func restoreSubmit(d *Dialog, b *snapshots.Box, sn *snapshots.Snapshot, guard []string) {
	d.Force = len(guard) > 0
	d.Submit = "Restore " + b.Name
	if d.Force {
		d.Submit += " anyway"
	}
	if sn.IsUndo() {
		// Restoring an undo undoes what came after it: the dialog says so.
		d.Title = fmt.Sprintf("Undo: put %s back to ‘%s’?", b.Name, sn.Name)
		d.Submit = strings.Replace(d.Submit, "Restore "+b.Name, "Undo", 1)
	}
	d.SubmitNoUndo = "Restore without undo"
	if d.NoUndo {
		d.Submit, d.Danger = d.SubmitNoUndo, true
	}
}

// swapWords says what undoing a restore whose undo is a held copy does: a
// new guest from the copy, the box's snapshots left on the earlier guest.
func swapWords(list []*snapshots.Snapshot) string {
	n := 0
	for _, x := range list {
		if x.Guest == "current" {
			n++
		}
	}
	if n == 1 {
		return "Undoing this makes a new guest from that copy; the 1 snapshot on its current guest stays there, fork only."
	}
	return fmt.Sprintf("Undoing this makes a new guest from that copy; the %d snapshots on its current guest stay there, fork only.", n)
}
