package web

import (
	"net/http"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/web/pagemodel"
)

// createThread makes a thread with its title; the tab it redirects to
// shows its token once.
func (s *Server) createThread(w http.ResponseWriter, r *http.Request) {
	title := r.PostFormValue("title")
	_, token, err := s.boxes.CreateThread(r.Context(), snapshots.Owner(), title)
	if err != nil {
		s.threadsTab(w, r, statusOf(err), threadsTab{Error: pagemodel.RefusalWords(err), Title: title})
		return
	}
	http.Redirect(w, r, "/boxes/threads?shown="+s.shown.hold(reveal{Secret: token, Name: title}), http.StatusSeeOther)
}
