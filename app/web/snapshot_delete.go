package web

import (
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/plans"
)

// freesWords says what deleting a snapshot frees, where it is known.
func (dlg *dialogBuilder) freesWords(b *snapshots.Box, sn *snapshots.Snapshot) string {
	return plans.DeleteFreesWords(b, sn, dlg.rows.whereWords(b))
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
	d := dialog{Kind: "delete", Title: plans.DeleteAskWords(sn.Name), Back: backOf(r, b.Name), Submit: "Delete", Danger: true,
		Action: fmt.Sprintf("/boxes/%s/snapshots/%s/delete", url.PathEscape(b.Name), sn.ID), Fingerprint: fingerprint(b, sn, nil)}
	d.Lines = append(d.Lines, plans.DeleteDialogLines(b, sn, dlg.rows.whereWords(b), tz)...)
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
	if _, err := s.opts.Keeps.Delete(r.Context(), snapshots.Owner(), snapshots.DeleteRequest{Box: box, Snapshot: id}); err != nil {
		d.Error = refusalWords(err)
		s.renderDialog(w, r, statusOf(err), d)
		return
	}
	s.done(w, r, backOf(r, box), "")
}
