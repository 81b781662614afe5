package web

import (
	"fmt"
	"net/http"
	"net/url"

	"github.com/go-chi/chi/v5"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

// saveDialog is Save…: an automatic snapshot becomes an ordinary one, with
// a name if given (moatbox's "Save with a name").
func (dlg *dialogBuilder) saveDialog(r *http.Request, boxRef, ref string) (dialog, error) {
	ctx := r.Context()
	sn, b, err := dlg.core.SnapshotOfBox(ctx, snapshots.Owner(), boxRef, ref)
	if err != nil {
		return dialog{}, err
	}
	settings, _ := dlg.core.Settings(ctx)
	d := dialog{Kind: "save", Title: fmt.Sprintf("Save ‘%s’", sn.Name), Back: backOf(r, b.Name), Submit: "Save",
		Action: fmt.Sprintf("/boxes/%s/snapshots/%s/save", url.PathEscape(b.Name), sn.ID), Fingerprint: fingerprint(b, sn, nil),
		NamePlaceholder: sn.Name}
	d.Lines = append(d.Lines, fmt.Sprintf("A saved snapshot is no longer thinned: it stays until it is deleted, and counts in %s's %d.", b.Name, settings.PerBox))
	if !sn.Automatic {
		d.Disabled, d.Error = true, snapshots.SavedAlreadyWords(sn.Name)
	}
	return d, nil
}

func (s *Server) showSaveDialog(w http.ResponseWriter, r *http.Request) {
	d, err := s.dialogs.saveDialog(r, chi.URLParam(r, "box"), chi.URLParam(r, "id"))
	if err != nil {
		s.refused(w, r, err)
		return
	}
	s.renderDialog(w, r, http.StatusOK, d)
}

// saveSnapshot saves it; the page is read again, as the snapshot moves
// from the timeline to the Snapshots card.
func (s *Server) saveSnapshot(w http.ResponseWriter, r *http.Request) {
	d, box, id, ok := s.postedDialog(w, r, s.dialogs.saveDialog)
	if !ok {
		return
	}
	sn, err := s.opts.Core.Save(r.Context(), snapshots.Owner(), box, id, r.PostFormValue("name"))
	if err != nil {
		d.Error = refusalWords(err)
		s.renderDialog(w, r, statusOf(err), d)
		return
	}
	s.reload(w, r, backOf(r, box), fmt.Sprintf("Saved ‘%s’.", sn.Name))
}
