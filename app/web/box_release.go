package web

import (
	"fmt"
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/views"
)

type releasePage struct {
	Page    views.Page
	Box     *snapshots.Box
	Goes    int
	Kept    int
	Message string
	// Stopped is the words of the last release, stopped because a held
	// copy could not be made; the page then offers "Release and delete it".
	Stopped string
}

// showRelease asks before a box is released, saying what goes with it.
func (s *Server) showRelease(w http.ResponseWriter, r *http.Request) {
	list, err := s.opts.Core.List(r.Context(), snapshots.Owner(), snapshots.ListQuery{Box: chi.URLParam(r, "box")})
	if err == nil && (len(list) != 1 || chi.URLParam(r, "box") == "") {
		_, err = s.opts.Core.Box(r.Context(), snapshots.Owner(), chi.URLParam(r, "box"))
		if err == nil {
			err = &snapshots.Refusal{Code: snapshots.CodeNotFound, Status: http.StatusNotFound, Words: "No such box."}
		}
	}
	if err != nil {
		s.refused(w, r, err)
		return
	}
	p := releasePage{Page: views.Page{Title: "Release " + list[0].Box.Name, SignedIn: true, Nav: "boxes"}, Box: list[0].Box}
	for _, sn := range list[0].Snapshots {
		if sn.Kept() {
			p.Kept++
		} else {
			p.Goes++
		}
	}
	switch {
	case p.Goes == 0 && p.Kept == 0:
		p.Message = fmt.Sprintf("%s has no snapshots.", p.Box.Name)
	case p.Kept == 0 && p.Goes == 1:
		p.Message = "Its snapshot goes with it."
	case p.Kept == 0:
		p.Message = fmt.Sprintf("Its %d snapshots go with it.", p.Goes)
	default:
		kept := fmt.Sprintf("the %d kept ones stay", p.Kept)
		if p.Kept == 1 {
			kept = "the kept one stays"
		}
		p.Message = fmt.Sprintf("Its snapshots that nobody kept (%d) go with it; %s, listed under it as released, until its keep date.", p.Goes, kept)
	}
	p.Stopped, _ = s.opts.Core.ReleaseStopped(r.Context(), snapshots.Owner(), p.Box.ID)
	s.render(w, r, http.StatusOK, "release", p)
}

// releaseBox releases a box: its operation waits for what runs on the box,
// deletes its unkept snapshots, and releases its guest.
func (s *Server) releaseBox(w http.ResponseWriter, r *http.Request) {
	release := s.opts.Core.ReleaseBox
	if r.PostFormValue("deleteKept") == "1" {
		release = s.opts.Core.ReleaseBoxDeletingKept // "Release and delete it"
	}
	op, err := release(r.Context(), snapshots.Owner(), chi.URLParam(r, "box"), r.PostFormValue("request"))
	if err != nil {
		s.refused(w, r, err)
		return
	}
	s.logger(r).Info("release asked", "box", chi.URLParam(r, "box"), "operation", op.ID)
	s.done(w, r, "/boxes", "Releasing "+chi.URLParam(r, "box")+": its snapshots that nobody kept go with it.")
}
