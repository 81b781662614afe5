package web

import (
	"fmt"
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/views"
)

// showReleaseDialog asks before a box is released, saying what goes with it.
func (s *Server) showReleaseDialog(w http.ResponseWriter, r *http.Request) {
	p, err := s.dialogs.ReleaseDialog(asked{r}, chi.URLParam(r, "box"))
	if err != nil {
		s.refused(w, r, err)
		return
	}
	p.Page = views.Page{Title: "Release " + p.Box.Name, SignedIn: true, Nav: "boxes"}
	s.render(w, r, http.StatusOK, "release", p)
}

// releaseBox releases a box: its operation waits for what runs on the box,
// deletes its unkept snapshots, and releases its guest.
func (s *Server) releaseBox(w http.ResponseWriter, r *http.Request) {
	release := s.boxes.ReleaseBox
	flash := ReleasingWords(chi.URLParam(r, "box"))
	b, err := s.opts.Core.Box(r.Context(), snapshots.Owner(), chi.URLParam(r, "box"))
	switch {
	case err != nil:
	case r.PostFormValue("deleteKept") == "1":
		release = s.boxes.ReleaseBoxDeletingKept // "Release and delete it"
	case b.State == snapshots.BoxTrashed:
		release = s.boxes.EmptyTrash // Release again, after emptying the trash stopped
	default:
		if st, err := s.opts.Core.Settings(r.Context()); err == nil && st.TrashHours > 0 {
			flash = fmt.Sprintf("Moving %s to the trash: you can restore it with its history for %d hours.", b.Name, st.TrashHours)
		}
	}
	op, err := release(r.Context(), snapshots.Owner(), chi.URLParam(r, "box"), r.PostFormValue("request"))
	if err != nil {
		s.refused(w, r, err)
		return
	}
	s.logger(r).Info("release asked", "box", chi.URLParam(r, "box"), "operation", op.ID)
	s.done(w, r, "/boxes", flash)
}
