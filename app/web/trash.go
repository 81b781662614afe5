package web

import (
	"fmt"
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/views"
)

// The Boxes page's Trash tab, and the reset dialog (issue 16, items 5 and
// 6).

// trashRow is one box in the trash.
type trashRow struct {
	Head  boxHead
	Goes  string // when it goes
	Final string // its final snapshot, or why there is none
	Costs string
}

type trashTab struct {
	Page  views.Page
	Tabs  tabCounts
	Rows  []trashRow
	Hours int
	Empty string // what the tab says with no box in the trash
}

// showTrash answers the Trash tab: every box in the trash, the soonest to
// go first, with Restore and Empty now.
func (s *Server) showTrash(w http.ResponseWriter, r *http.Request) {
	list, err := s.opts.Core.Boxes().Trash(r.Context(), snapshots.Owner())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	st, err := s.opts.Core.Settings(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	tz := s.opts.Core.TimeZone(r.Context())
	rc := s.rowContext(r, "/boxes/trash")
	p := trashTab{Page: views.Page{Title: "Boxes, Trash", SignedIn: true, Nav: "boxes", Flash: s.flash(w, r)},
		Tabs: s.tabCounts(r, "trash", -1), Hours: st.TrashHours, Empty: snapshots.TrashEmptyWords}
	for _, e := range list {
		row := trashRow{Head: s.head(e.Box, rc), Goes: "goes " + e.Until.In(tz).Format("Mon 2 Jan 15:04"), Costs: e.Costs}
		if e.FinalName != "" {
			row.Final = fmt.Sprintf("Its final snapshot, ‘%s’, is in its history.", e.FinalName)
		} else {
			row.Final = "No final snapshot: " + e.FinalWords
		}
		p.Rows = append(p.Rows, row)
	}
	s.render(w, r, http.StatusOK, "trash", p)
}

// restoreFromTrash gives a box back from the trash, with its history.
func (s *Server) restoreFromTrash(w http.ResponseWriter, r *http.Request) {
	name := chi.URLParam(r, "box")
	op, err := s.opts.Core.Boxes().RestoreFromTrash(r.Context(), snapshots.Owner(), name, r.PostFormValue("request"))
	if err != nil {
		s.refused(w, r, err)
		return
	}
	s.logger(r).Info("restore from the trash asked", "box", name, "operation", op.ID)
	s.done(w, r, "/boxes/"+name, snapshots.UntrashingWords(name))
}

type emptyTrashPage struct {
	Page    views.Page
	Box     *snapshots.Box
	Message string
}

// showEmptyTrash asks before a box in the trash is released now, saying
// what goes with it.
func (s *Server) showEmptyTrash(w http.ResponseWriter, r *http.Request) {
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
		Message: releaseWords(b.Name, goes, kept)}
	s.render(w, r, http.StatusOK, "trash_empty", p)
}

// emptyTrash releases a box in the trash now.
func (s *Server) emptyTrash(w http.ResponseWriter, r *http.Request) {
	name := chi.URLParam(r, "box")
	op, err := s.opts.Core.Boxes().EmptyTrash(r.Context(), snapshots.Owner(), name, r.PostFormValue("request"))
	if err != nil {
		s.refused(w, r, err)
		return
	}
	s.logger(r).Info("empty the trash asked", "box", name, "operation", op.ID)
	s.done(w, r, "/boxes/trash", snapshots.ReleasingWords(name))
}

type resetPage struct {
	Page    views.Page
	Box     *snapshots.Box
	Preview *snapshots.ResetPreview
	Guard   []string
	Error   string
}

// showReset asks before a box is reset, saying what it becomes, what Keep
// logins carries over, and the undo taken first.
func (s *Server) showReset(w http.ResponseWriter, r *http.Request) {
	s.resetDialog(w, r, http.StatusOK, "")
}

func (s *Server) resetDialog(w http.ResponseWriter, r *http.Request, status int, errWords string) {
	b, err := s.opts.Core.Box(r.Context(), snapshots.Owner(), chi.URLParam(r, "box"))
	if err != nil {
		s.refused(w, r, err)
		return
	}
	pv, err := s.opts.Core.PreviewReset(r.Context(), snapshots.Owner(), b.ID, "")
	if err != nil {
		s.refused(w, r, err)
		return
	}
	p := resetPage{Page: views.Page{Title: "Reset " + b.Name, SignedIn: true, Nav: "boxes"}, Box: b, Preview: pv,
		Guard: s.opts.Core.Guard(r.Context(), snapshots.Owner(), b), Error: errWords}
	s.render(w, r, status, "reset", p)
}

// resetBox resets a box to a fresh one, with Keep logins when ticked.
func (s *Server) resetBox(w http.ResponseWriter, r *http.Request) {
	name := chi.URLParam(r, "box")
	op, err := s.opts.Core.Reset(r.Context(), snapshots.Owner(), snapshots.ResetRequest{Box: name,
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

// undoBox restores the box to its newest undo.
func (s *Server) undoBox(w http.ResponseWriter, r *http.Request) {
	name := chi.URLParam(r, "box")
	op, err := s.opts.Core.UndoNewest(r.Context(), snapshots.Owner(), name, r.PostFormValue("request"), r.PostFormValue("force") == "1")
	if err != nil {
		s.refused(w, r, err)
		return
	}
	s.logger(r).Info("undo asked", "box", name, "operation", op.ID)
	s.done(w, r, "/boxes/"+name, "Undoing on "+name+": it goes back to its newest undo.")
}
