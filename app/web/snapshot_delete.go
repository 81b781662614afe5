package web

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

// freesWords says what deleting a snapshot frees, where it is known.
func (dlg *dialogBuilder) freesWords(b *snapshots.Box, sn *snapshots.Snapshot) string {
	if sn.SizeBytes == nil {
		return "What it frees is not known."
	}
	if sn.SizeMeaning != nil && *sn.SizeMeaning == "whole" {
		return fmt.Sprintf("Frees what it no longer shares with %s.", b.Name)
	}
	if *sn.SizeBytes == 0 {
		return fmt.Sprintf("Frees next to nothing: it shares all its data with %s.", b.Name)
	}
	return fmt.Sprintf("Frees %s %s.", snapshots.GB(*sn.SizeBytes), dlg.rows.whereWords(b))
}

// undoOfWords says which restore an undo belongs to.
func undoOfWords(sn *snapshots.Snapshot) string {
	if at, ok := strings.CutPrefix(sn.Name, "before the restore at "); ok {
		return fmt.Sprintf("It is the undo of the restore at %s.", at)
	}
	return "It is the undo of a restore."
}

// deleteDialog asks "Delete ‘Thu 09:15’? Frees 3.4 GB on pve-1.", and says
// when it is kept or an undo.
func (dlg *dialogBuilder) deleteDialog(r *http.Request, boxRef, ref string) (dialog, error) {
	ctx := r.Context()
	sn, b, err := dlg.core.SnapshotOfBox(ctx, snapshots.Owner(), boxRef, ref)
	if err != nil {
		return dialog{}, err
	}
	tz := dlg.core.TimeZone(ctx)
	d := dialog{Kind: "delete", Title: fmt.Sprintf("Delete ‘%s’?", sn.Name), Back: backOf(r, b.Name), Submit: "Delete", Danger: true,
		Action: fmt.Sprintf("/boxes/%s/snapshots/%s/delete", url.PathEscape(b.Name), sn.ID), Fingerprint: fingerprint(b, sn, nil)}
	d.Lines = append(d.Lines, dlg.freesWords(b, sn))
	if sn.Kept() {
		d.Lines = append(d.Lines, fmt.Sprintf("You kept it until %s.", sn.KeptUntil.In(tz).Format("2 Jan")))
	}
	if sn.IsUndo() {
		d.Lines = append(d.Lines, undoOfWords(sn))
	}
	if list, lerr := dlg.core.List(ctx, snapshots.Owner(), snapshots.ListQuery{Box: b.ID}); lerr == nil && len(list) > 0 {
		if werr := snapshots.Eligible(sn, snapshots.ChangeDelete, list[0].Pins[sn.ID], time.Now(), tz); werr != nil {
			d.Disabled, d.Error = true, refusalWords(werr)
		}
	}
	return d, nil
}

func (s *Server) showDeleteDialog(w http.ResponseWriter, r *http.Request) {
	d, err := s.dialogs.deleteDialog(r, chi.URLParam(r, "box"), chi.URLParam(r, "id"))
	if err != nil {
		s.refused(w, r, err)
		return
	}
	s.renderDialog(w, r, http.StatusOK, d)
}

// deleteSnapshot deletes one snapshot; the row goes when it is gone.
func (s *Server) deleteSnapshot(w http.ResponseWriter, r *http.Request) {
	d, box, id, ok := s.postedDialog(w, r, s.dialogs.deleteDialog)
	if !ok {
		return
	}
	if _, err := s.opts.Core.Delete(r.Context(), snapshots.Owner(), snapshots.DeleteRequest{Box: box, Snapshot: id}); err != nil {
		d.Error = refusalWords(err)
		s.renderDialog(w, r, statusOf(err), d)
		return
	}
	s.done(w, r, backOf(r, box), "")
}
