package web

import (
	"net/http"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/web/pagemodel"
	"github.com/boxsnap/boxsnap/views"
)

// The Boxes page's Trash tab: the boxes released to the trash, each until
// it goes.

type trashTab struct {
	Page  views.Page
	Tabs  pagemodel.TabCounts
	Rows  []pagemodel.TrashRow
	Hours int
	Empty string // what the tab says with no box in the trash
}

// showTrash answers the Trash tab: every box in the trash, the soonest to
// go first, with Restore and Empty now.
func (s *Server) showTrash(w http.ResponseWriter, r *http.Request) {
	list, err := s.boxes.Trash(r.Context(), snapshots.Owner())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	st, err := s.opts.Core.Settings(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	rc := s.rows.RowContext(r.Context(), "/boxes/trash", r.URL.Query().Get("select") == "1")
	p := trashTab{Page: views.Page{Title: "Boxes, Trash", SignedIn: true, Nav: "boxes", Flash: s.flash(w, r)},
		Tabs: s.tabCounts(r, "trash", -1), Hours: st.TrashHours, Empty: snapshots.TrashEmptyWords, Rows: s.rows.TrashRows(list, rc)}
	s.render(w, r, http.StatusOK, "trash", p)
}

type emptyTrashPage struct {
	Page    views.Page
	Box     *snapshots.Box
	Message string
}
