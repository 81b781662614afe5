package web

import (
	"fmt"
	"net/http"
	"net/url"

	"github.com/go-chi/chi/v5"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

func (dlg *dialogBuilder) renameDialog(r *http.Request, boxRef, ref string) (dialog, error) {
	sn, b, err := dlg.core.SnapshotOfBox(r.Context(), snapshots.Owner(), boxRef, ref)
	if err != nil {
		return dialog{}, err
	}
	return dialog{Kind: "rename", Title: fmt.Sprintf("Rename ‘%s’", sn.Name), Back: backOf(r, b.Name), Submit: "Rename", Name: sn.Name,
		Action: fmt.Sprintf("/boxes/%s/snapshots/%s/rename", url.PathEscape(b.Name), sn.ID)}, nil
}

func (s *Server) showRenameDialog(w http.ResponseWriter, r *http.Request) {
	d, err := s.dialogs.renameDialog(r, chi.URLParam(r, "box"), chi.URLParam(r, "id"))
	if err != nil {
		s.refused(w, r, err)
		return
	}
	s.renderDialog(w, r, http.StatusOK, d)
}

// renameSnapshot renames a snapshot, or shows the dialog again with why not.
func (s *Server) renameSnapshot(w http.ResponseWriter, r *http.Request) {
	box, id := chi.URLParam(r, "box"), chi.URLParam(r, "id")
	if _, err := s.opts.Keeps.Rename(r.Context(), snapshots.Owner(), box, id, r.PostFormValue("name")); err != nil {
		d, derr := s.dialogs.renameDialog(r, box, id)
		if derr != nil {
			s.refused(w, r, err)
			return
		}
		d.Error, d.Name = refusalWords(err), r.PostFormValue("name")
		s.renderDialog(w, r, statusOf(err), d)
		return
	}
	s.done(w, r, backOf(r, box), "")
}
