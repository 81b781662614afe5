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
	if d.UndoBytes != nil {
		w += fmt.Sprintf(" The undo takes up to %s %s", snapshots.GB(*d.UndoBytes), where)
		if d.UndoPrice != "" {
			w += ", at " + d.UndoPrice
		}
		w += "."
	} else if d.UndoPrice != "" {
		w += " The undo costs " + d.UndoPrice + "."
	}
	return w + " " + snapshots.NothingChangedDryWords
}

// asksFirstWords opens the dry run of an agent's restore that would ask the
// person first.
func asksFirstWords(box string) string {
	return fmt.Sprintf("This restore would first ask the person: boxsnap records a request, and %s is restored only once they approve it (poll the request with box_operation). Then:", box)
}
