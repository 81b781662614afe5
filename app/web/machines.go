package web

import (
	"net/http"
	"net/url"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/boxes"
	"github.com/boxsnap/boxsnap/app/web/pagemodel"
	"github.com/boxsnap/boxsnap/views"
)

// machinesPerPage is how many boxes each of the Machines tab's lists (live,
// released) sends at once; the rest arrive as the owner scrolls (htmx "load
// more" on reveal), as on the Snapshots tab.
const machinesPerPage = 50

type machinesTab struct {
	Page     views.Page
	Tabs     pagemodel.TabCounts
	Machines pagemodel.MachineList
	Released pagemodel.MachineList
	New      newBoxForm
}

// showMachines answers the Boxes page's Machines tab: a page of the live
// boxes and one of the released (from after and released_after), each box
// with its snapshots' counts, read in the database for the page's boxes
// alone; or, for "load more" (an htmx request with after or
// released_after), the next page of that list alone.
func (s *Server) showMachines(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	rc := s.rows.RowContext(r.Context(), "/boxes", r.URL.Query().Get("select") == "1")
	v := r.URL.Query()
	list := func(released bool, after string) (pagemodel.MachineList, error) {
		page, err := s.boxes.Machines(ctx, snapshots.Owner(), boxes.MachinesQuery{Released: released, After: after, Limit: machinesPerPage})
		if err != nil && after != "" {
			// A place from an old address: from the start.
			page, err = s.boxes.Machines(ctx, snapshots.Owner(), boxes.MachinesQuery{Released: released, Limit: machinesPerPage})
		}
		if err != nil {
			return pagemodel.MachineList{}, err
		}
		var l pagemodel.MachineList
		shown := make([]snapshots.BoxSnapshots, len(page.Boxes))
		for i, m := range page.Boxes {
			shown[i] = snapshots.BoxSnapshots{Box: m.Box}
		}
		rc.Threads.KnowBoxes(shown)
		for _, m := range page.Boxes {
			row := pagemodel.MachineRow{Head: s.rows.Head(m.Box, rc), Count: m.Counts.Words()}
			row.State, row.StateClass = s.rows.MachineState(ctx, m.Box)
			l.Rows = append(l.Rows, row)
		}
		if page.Next != "" {
			key := "after"
			if released {
				key = "released_after"
			}
			l.More = "/boxes?" + url.Values{key: {page.Next}}.Encode()
			l.MoreID = "more-" + key + "-" + page.Boxes[len(page.Boxes)-1].Box.ID
		}
		return l, nil
	}
	if r.Header.Get("HX-Request") == "true" && (v.Get("after") != "" || v.Get("released_after") != "") {
		released := v.Get("released_after") != ""
		after := v.Get("after")
		if released {
			after = v.Get("released_after")
		}
		l, err := list(released, after)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		s.renderBlock(w, http.StatusOK, "machines", "machine-rows", l)
		return
	}
	p := machinesTab{Page: views.Page{Title: "Boxes", SignedIn: true, Nav: "boxes", Flash: s.flash(w, r)}, Tabs: s.tabCounts(r, "machines", -1),
		New: s.newBoxForm(r)}
	var err error
	if p.Machines, err = list(false, v.Get("after")); err == nil {
		p.Released, err = list(true, v.Get("released_after"))
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, "machines", p)
}
