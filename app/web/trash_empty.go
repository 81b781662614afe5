package web

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/plans"
	"github.com/boxsnap/boxsnap/views"
)

// showEmptyTrashDialog asks before a box in the trash is released now, saying
// what goes with it.
func (s *Server) showEmptyTrashDialog(w http.ResponseWriter, r *http.Request) {
	list, err := s.opts.Core.List(r.Context(), snapshots.Owner(), snapshots.ListQuery{Box: chi.URLParam(r, "box")})
	if err != nil || len(list) != 1 {
		if err == nil {
			err = &snapshots.Refusal{Code: snapshots.CodeNotFound, Words: "No such box."}
		}
		s.refused(w, r, err)
		return
	}
	b := list[0].Box
	goes, kept := 0, 0
	for _, sn := range list[0].Snapshots {
		if sn.Kept() {
			kept++
		} else {
			goes++
		}
	}
	p := emptyTrashPage{Page: views.Page{Title: "Empty " + b.Name + " from the trash", SignedIn: true, Nav: "boxes"}, Box: b,
		Message: plans.EmptyTrashGoesWords(b.Name) + " " + plans.ReleaseSnapshotsWords(b.Name, goes, kept)}
	s.render(w, r, http.StatusOK, "trash_empty", p)
}

// emptyTrash releases a box in the trash now.
func (s *Server) emptyTrash(w http.ResponseWriter, r *http.Request) {
	name := chi.URLParam(r, "box")
	op, err := s.boxes.EmptyTrash(r.Context(), snapshots.Owner(), name, r.PostFormValue("request"))
	if err != nil {
		s.refused(w, r, err)
		return
	}
	s.logger(r).Info("empty the trash asked", "box", name, "operation", op.ID)
	s.done(w, r, "/boxes/trash", ReleasingWords(name))
}
