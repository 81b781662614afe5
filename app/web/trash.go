package web

import (
	"fmt"
	"net/http"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/web/pagemodel"
	"github.com/boxsnap/boxsnap/views"
)

// The Boxes page's Trash tab: the boxes released to the trash, each until
// it goes.

// trashRow is one box in the trash.
type trashRow struct {
	Head  pagemodel.BoxHead
	Goes  string // when it goes
	Final string // its final snapshot, or why there is none
	Costs string
}

type trashTab struct {
	Page  views.Page
	Tabs  pagemodel.TabCounts
	Rows  []trashRow
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
	tz := s.opts.Core.TimeZone(r.Context())
	rc := s.rows.RowContext(r.Context(), "/boxes/trash", r.URL.Query().Get("select") == "1")
	p := trashTab{Page: views.Page{Title: "Boxes, Trash", SignedIn: true, Nav: "boxes", Flash: s.flash(w, r)},
		Tabs: s.tabCounts(r, "trash", -1), Hours: st.TrashHours, Empty: snapshots.TrashEmptyWords}
	for _, e := range list {
		row := trashRow{Head: s.rows.Head(e.Box, rc), Goes: "goes " + e.Until.In(tz).Format("Mon 2 Jan 15:04"), Costs: e.Costs}
		if e.FinalName != "" {
			row.Final = fmt.Sprintf("Its final snapshot, ‘%s’, is in its history.", e.FinalName)
		} else {
			row.Final = "No final snapshot: " + e.FinalWords
		}
		p.Rows = append(p.Rows, row)
	}
	s.render(w, r, http.StatusOK, "trash", p)
}

type emptyTrashPage struct {
	Page    views.Page
	Box     *snapshots.Box
	Message string
}
