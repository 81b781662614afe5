package web

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/restore"
	"github.com/boxsnap/boxsnap/views"
)

// showResetDialog asks before a box is reset, saying what it becomes, what Keep
// logins carries over, and the undo taken first.
func (s *Server) showResetDialog(w http.ResponseWriter, r *http.Request) {
	s.resetDialog(w, r, http.StatusOK, "")
}

func (s *Server) resetDialog(w http.ResponseWriter, r *http.Request, status int, errWords string) {
	p, err := s.dialogs.ResetDialog(asked{r}, chi.URLParam(r, "box"), errWords)
	if err != nil {
		s.refused(w, r, err)
		return
	}
	p.Page = views.Page{Title: "Reset " + p.Box.Name, SignedIn: true, Nav: "boxes"}
	s.render(w, r, status, "reset", p)
}

// resetBox resets a box to a fresh one, with Keep logins when ticked.
func (s *Server) resetBox(w http.ResponseWriter, r *http.Request) {
	name := chi.URLParam(r, "box")
	op, err := s.opts.Restores.Resets().Reset(r.Context(), snapshots.Owner(), restore.ResetRequest{Box: name,
		KeepLogins: r.PostFormValue("keepLogins") == "1", Force: r.PostFormValue("force") == "1", RequestID: r.PostFormValue("request")})
	if err != nil {
		if ref, ok := snapshots.AsRefusal(err); ok {
			s.resetDialog(w, r, statusOf(ref), ref.Words)
			return
		}
		s.fail(w, r, err)
		return
	}
	s.logger(r).Info("reset asked", "box", name, "operation", op.ID)
	s.done(w, r, "/boxes/"+name, "Resetting "+name+" to a fresh box: boxsnap takes its undo first.")
}
