package web

import (
	"fmt"
	"net/http"
	"net/url"

	"github.com/go-chi/chi/v5"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

func (dlg *dialogBuilder) noteDialog(r *http.Request, boxRef, ref string) (dialog, error) {
	sn, b, err := dlg.core.SnapshotOfBox(r.Context(), snapshots.Owner(), boxRef, ref)
	if err != nil {
		return dialog{}, err
	}
	d := dialog{Kind: "note", Title: fmt.Sprintf("Note on ‘%s’", sn.Name), Back: backOf(r, b.Name), Submit: "Save note",
		Action: fmt.Sprintf("/boxes/%s/snapshots/%s/note", url.PathEscape(b.Name), sn.ID)}
	if sn.Note != nil {
		d.Note = *sn.Note
	}
	return d, nil
}

func (s *Server) showNoteDialog(w http.ResponseWriter, r *http.Request) {
	d, err := s.dialogs.noteDialog(r, chi.URLParam(r, "box"), chi.URLParam(r, "id"))
	if err != nil {
		s.refused(w, r, err)
		return
	}
	s.renderDialog(w, r, http.StatusOK, d)
}

// noteSnapshot sets or clears a snapshot's note.
func (s *Server) noteSnapshot(w http.ResponseWriter, r *http.Request) {
	box, id := chi.URLParam(r, "box"), chi.URLParam(r, "id")
	if _, err := s.opts.Keeps.SetNote(r.Context(), snapshots.Owner(), box, id, r.PostFormValue("note")); err != nil {
		d, derr := s.dialogs.noteDialog(r, box, id)
		if derr != nil {
			s.refused(w, r, err)
			return
		}
		d.Error, d.Note = refusalWords(err), r.PostFormValue("note")
		s.renderDialog(w, r, statusOf(err), d)
		return
	}
	s.done(w, r, backOf(r, box), "")
}
