package plans

import (
	"fmt"
	"strings"
	"time"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

// The words of the plans: what the person's Delete and Reset dialogs say,
// and a dry run says of the same plan, and from nowhere else. The kernel's
// words.go says the words the kernel and the other seams share.

// DeleteAskWords is the Delete dialog's question: "Delete ‘Thu 09:15’?".
func DeleteAskWords(name string) string { return fmt.Sprintf("Delete ‘%s’?", name) }

// DeleteDialogLines are the Delete dialog's lines, which a delete's dry run
// says too: what it frees, that it is kept, that it is an undo.
func DeleteDialogLines(b *snapshots.Box, sn *snapshots.Snapshot, where string, tz *time.Location) []string {
	lines := []string{DeleteFreesWords(b, sn, where)}
	if sn.Kept() {
		lines = append(lines, KeptUntilWords(*sn.KeptUntil, tz))
	}
	if sn.IsUndo() {
		lines = append(lines, UndoOfWords(sn))
	}
	return lines
}

// DeleteFreesWords says what deleting a snapshot frees, where it is known:
// "Frees 3.4 GB on pve-1."; where is the box's place (WhereWords).
func DeleteFreesWords(b *snapshots.Box, sn *snapshots.Snapshot, where string) string {
	if sn.SizeBytes == nil {
		return "What it frees is not known."
	}
	if sn.SizeMeaning != nil && *sn.SizeMeaning == "whole" {
		return fmt.Sprintf("Frees what it no longer shares with %s.", b.Name)
	}
	if *sn.SizeBytes == 0 {
		return fmt.Sprintf("Frees next to nothing: it shares all its data with %s.", b.Name)
	}
	return fmt.Sprintf("Frees %s %s.", snapshots.GB(*sn.SizeBytes), where)
}

// KeptUntilWords says a kept snapshot's keep date: "You kept it until 29
// Nov.".
func KeptUntilWords(until time.Time, tz *time.Location) string {
	return fmt.Sprintf("You kept it until %s.", until.In(tz).Format("2 Jan"))
}

// UndoOfWords says which restore an undo belongs to.
func UndoOfWords(sn *snapshots.Snapshot) string {
	if at, ok := strings.CutPrefix(sn.Name, "before the restore at "); ok {
		return fmt.Sprintf("It is the undo of the restore at %s.", at)
	}
	return "It is the undo of a restore."
}

// WhereWords says where a box lives: "on this host", "Proxmox LXC on
// pve-1"; be and ok are its backend as BackendOf answers it.
func WhereWords(be snapshots.Backend, ok bool, b *snapshots.Box) string {
	label := b.BackendID
	if ok {
		label = be.Label
	}
	if ok && be.Kind == "local" {
		return "on " + label
	}
	if b.Host != "" && !strings.Contains(label, b.Host) {
		return fmt.Sprintf("%s on %s", label, b.Host)
	}
	return "on " + label
}

// ResetBecomesWords is the Reset dialog's first line: what the box
// becomes, what goes and what stays.
func ResetBecomesWords(box, from string) string {
	return fmt.Sprintf("%s becomes a fresh copy of %s: everything on it now goes, except the logins you keep. Its snapshots stay.", box, from)
}

// ResetUndoLineWords is the Reset dialog's line on the undo taken first.
const ResetUndoLineWords = "boxsnap takes an undo of it first; Undo puts it back. Undos do not count against the 5, and a box keeps 2."

// deleteDryWords says what a delete would do: the Delete dialog's question
// and lines, then that nothing changed.
func deleteDryWords(d *DeleteDry) string {
	return DeleteAskWords(d.Name) + " " + strings.Join(d.Lines, " ") + " " + snapshots.NothingChangedDryWords
}

// resetDryWords says what a reset would do: the Reset dialog's words, the
// logins kept, what else ends, the undo's space and price.
func resetDryWords(d *ResetDry, where string) string {
	w := ResetBecomesWords(d.Box, d.From)
	if len(d.Logins) > 0 {
		w += " Keep logins carries over, from each home folder: " + strings.Join(d.Logins, ", ") + "."
	} else {
		w += " No logins are kept."
	}
	if len(d.Goes) > 0 {
		w += " It also ends: " + strings.Join(d.Goes, " ")
	}
	w += " " + ResetUndoLineWords
	if c := undoCostWords(d.UndoBytes, d.UndoPrice, where); c != "" {
		w += " " + c
	}
	return w + " " + snapshots.NothingChangedDryWords
}

// undoCostWords says what an undo taken first takes: its space where
// (WhereWords) and its price, where known; "" where neither is.
func undoCostWords(bytes *int64, price, where string) string {
	switch {
	case bytes != nil && price != "":
		return fmt.Sprintf("The undo takes up to %s %s, at %s.", snapshots.GB(*bytes), where, price)
	case bytes != nil:
		return fmt.Sprintf("The undo takes up to %s %s.", snapshots.GB(*bytes), where)
	case price != "":
		return "The undo costs " + price + "."
	}
	return ""
}

// asksFirstWords opens the dry run of an agent's restore that would ask the
// person first.
func asksFirstWords(box string) string {
	return fmt.Sprintf("This restore would first ask the person: boxsnap records a request, and %s is restored only once they approve it (poll the request with box_operation). Then:", box)
}

// ReleaseGoesWords is the release dialog's line on the box itself: it goes
// with everything on it, after the trash where the trash comes first.
func ReleaseGoesWords(name string, trashFirst bool) string {
	if trashFirst {
		return fmt.Sprintf("After that, %s and everything on it go.", name)
	}
	return fmt.Sprintf("%s and everything on it go.", name)
}

// EmptyTrashGoesWords is the Empty from the trash dialog's line on the box
// itself.
func EmptyTrashGoesWords(name string) string {
	return fmt.Sprintf("%s and everything on it go now, and cannot be restored.", name)
}

// ReleaseSnapshotsWords say what goes with a released box and what stays,
// in plain words for none, one and many, as the release dialog and a
// release's dry run say them.
func ReleaseSnapshotsWords(name string, goes, kept int) string {
	switch {
	case goes == 0 && kept == 0:
		return fmt.Sprintf("%s has no snapshots.", name)
	case kept == 0 && goes == 1:
		return "Its snapshot goes with it."
	case kept == 0:
		return fmt.Sprintf("Its %d snapshots go with it.", goes)
	}
	stays := fmt.Sprintf("its %d kept snapshots stay, listed under it as released, until their keep dates", kept)
	if kept == 1 {
		stays = "its kept snapshot stays, listed under it as released, until its keep date"
	}
	switch goes {
	case 0:
		return fmt.Sprintf("No snapshot goes with it: %s.", stays)
	case 1:
		return fmt.Sprintf("Its one snapshot that nobody kept goes with it; %s.", stays)
	}
	return fmt.Sprintf("Its %d snapshots that nobody kept go with it; %s.", goes, stays)
}

// heldCopiesWords say that a kept snapshot outlives its box as a held copy.
const heldCopiesWords = "boxsnap first makes a held copy of each kept snapshot, so that it outlives the box: each takes its used disk until its keep date."

// deleteKeptDryWords say what the person's "Release and delete it" does
// with the kept snapshots.
const deleteKeptDryWords = "Release and delete it: each kept snapshot not yet copied stops being kept and goes with it; held copies made already stay kept."

// releaseDryWords say what a release or an emptying of the trash would do:
// the release dialog's words (trash, where the trash comes first), then
// that nothing changed; empty, the Empty from the trash dialog's words.
func releaseDryWords(d *ReleaseDry, trash string, empty, deleteKept bool) string {
	w := ReleaseGoesWords(d.Box, trash != "")
	if empty {
		w = EmptyTrashGoesWords(d.Box)
	}
	w += " " + ReleaseSnapshotsWords(d.Box, len(d.Goes), len(d.Kept))
	if trash != "" {
		w = trash + " " + w
	}
	if deleteKept {
		w += " " + deleteKeptDryWords
	}
	if d.HeldCopies {
		w += " " + heldCopiesWords
	}
	return w + " " + snapshots.NothingChangedDryWords
}
