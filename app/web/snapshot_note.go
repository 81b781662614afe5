package web

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/web/pagemodel"
)

func (s *Server) showNoteDialog(w http.ResponseWriter, r *http.Request) {
	d, err := s.dialogs.NoteDialog(asked{r}, chi.URLParam(r, "box"), chi.URLParam(r, "id"))
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
		d, derr := s.dialogs.NoteDialog(asked{r}, box, id)
		if derr != nil {
			s.refused(w, r, err)
			return
		}
		d.Error, d.Note = pagemodel.RefusalWords(err), r.PostFormValue("note")
		s.renderDialog(w, r, statusOf(err), d)
		return
	}
	s.done(w, r, backOf(r, box), "")
}
