package web

import (
	"fmt"
	"net/http"
	"net/url"

	"github.com/go-chi/chi/v5"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/plans"
	"github.com/boxsnap/boxsnap/providers"
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
	// Keepable counts its unkept snapshots that Keep could keep; KeepFirst
	// is where to keep them before the release, or "".
	Keepable  int
	KeepFirst string
	// Trash says where the release puts the box first, and what the trash
	// costs on its backend; empty when it goes at once.
	Trash string
	// GoesWords says that the box and everything on it go, after the trash
	// where it comes first.
	GoesWords string
}

// showReleaseDialog asks before a box is released, saying what goes with it.
func (s *Server) showReleaseDialog(w http.ResponseWriter, r *http.Request) {
	list, err := s.opts.Core.List(r.Context(), snapshots.Owner(), snapshots.ListQuery{Box: chi.URLParam(r, "box")})
	if err == nil && (len(list) != 1 || chi.URLParam(r, "box") == "") {
		_, err = s.opts.Core.Box(r.Context(), snapshots.Owner(), chi.URLParam(r, "box"))
		if err == nil {
			err = &snapshots.Refusal{Code: snapshots.CodeNotFound, Words: "No such box."}
		}
	}
	if err != nil {
		s.refused(w, r, err)
		return
	}
	p := releasePage{Page: views.Page{Title: "Release " + list[0].Box.Name, SignedIn: true, Nav: "boxes"}, Box: list[0].Box}
	for _, sn := range list[0].Snapshots {
		switch {
		case sn.Kept():
			p.Kept++
		default:
			p.Goes++
			if !sn.IsUndo() && sn.State == snapshots.StateReady {
				p.Keepable++
			}
		}
	}
	p.Message = plans.ReleaseSnapshotsWords(p.Box.Name, p.Goes, p.Kept)
	// Keep first: where some of its snapshots go and its backend can keep
	// them past the release, the page links to them on the Snapshots tab.
	if sp := s.opts.Core.Snapshotting(p.Box); p.Keepable > 0 && sp != nil && sp.KeepsPastRelease != providers.KeepsNo && sp.Fork != providers.ForkNone {
		p.KeepFirst = "/boxes/snapshots?q=" + url.QueryEscape(p.Box.Name)
	}
	p.Stopped, _ = s.boxes.ReleaseStopped(r.Context(), snapshots.Owner(), p.Box.ID)
	if p.Box.State == snapshots.BoxReady && p.Stopped == "" {
		if st, err := s.opts.Core.Settings(r.Context()); err == nil && st.TrashHours > 0 {
			p.Trash, _ = s.boxes.ReleaseWords(r.Context(), p.Box)
		}
	}
	p.GoesWords = plans.ReleaseGoesWords(p.Box.Name, p.Trash != "")
	s.render(w, r, http.StatusOK, "release", p)
}

// releaseBox releases a box: its operation waits for what runs on the box,
// deletes its unkept snapshots, and releases its guest.
func (s *Server) releaseBox(w http.ResponseWriter, r *http.Request) {
	release := s.boxes.ReleaseBox
	flash := snapshots.ReleasingWords(chi.URLParam(r, "box"))
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
