package web

import (
	"net/http"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/views"
)

// machineRow is one box on the Machines tab.
type machineRow struct {
	Head  boxHead
	Count string // by the core's one counting rule
}

type machinesTab struct {
	Page     views.Page
	Tabs     tabCounts
	Machines []machineRow
	Released []machineRow
	New      newBoxForm
}

// showMachines answers the Boxes page's Machines tab.
func (s *Server) showMachines(w http.ResponseWriter, r *http.Request) {
	list, err := s.opts.Core.List(r.Context(), snapshots.Owner(), snapshots.ListQuery{})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	counts := map[string]snapshots.Counts{}
	for _, bs := range list {
		counts[bs.Box.ID] = snapshots.CountOf(bs.Snapshots)
	}
	boxes, err := s.opts.Core.Boxes(r.Context(), snapshots.Owner())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	rc := s.rowContext(r, "/boxes")
	p := machinesTab{Page: views.Page{Title: "Boxes", SignedIn: true, Nav: "boxes", Flash: s.flash(w, r)}, Tabs: s.tabCounts(r, "machines", -1),
		New: s.newBoxForm(r)}
	for _, b := range boxes {
		if b.State == snapshots.BoxTrashed {
			continue // on the Trash tab
		}
		row := machineRow{Head: s.head(b, rc), Count: counts[b.ID].Words()}
		if b.ReleasedAt != nil {
			p.Released = append(p.Released, row)
		} else {
			p.Machines = append(p.Machines, row)
		}
	}
	s.render(w, r, http.StatusOK, "machines", p)
}
