package web

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/providers"
)

// changeRow is one path of a comparison.
type changeRow struct {
	Change, Path, Type, Before, After string
	// Href opens it: a changed text file's diff, or the entry in the
	// snapshot.
	Href string
}

// againstOption is one choice of what to compare with.
type againstOption struct {
	Value, Text string
	Selected    bool
}

type comparePage struct {
	Page     lookPageData
	Words    string
	Range    string
	Rows     []changeRow
	Against  []againstOption
	Prev     string
	Next     string
	Nothing  bool
	AgainstQ string
}

// comparePageSize is how many changes a page of the Compare list shows.
const comparePageSize = 100

// showSnapshotCompare is the Compare page: what was added, removed and
// changed since the snapshot, in the box now or in another snapshot of the
// box, with sizes, a page at a time.
func (s *Server) showSnapshotCompare(w http.ResponseWriter, r *http.Request) {
	h, err := s.lookHeadOf(r, "compare")
	if err != nil {
		s.refused(w, r, err)
		return
	}
	ctx := r.Context()
	against := r.URL.Query().Get("against")
	offset, _ := strconv.Atoi(r.URL.Query().Get("offset"))
	cmp, err := s.opts.Contents.Compare(ctx, snapshots.Owner(), h.Snap.ID, against, offset, comparePageSize)
	if err != nil {
		s.refused(w, r, err)
		return
	}
	title := "Compare ‘" + h.Snap.Name + "’ with " + h.Box.Name + " now"
	if cmp.Against != nil {
		title = "Compare ‘" + h.Snap.Name + "’ with ‘" + cmp.Against.Name + "’"
	}
	p := comparePage{Page: lookPageData{lookHead: h, Title: title, SignedIn: true, Nav: "boxes"}, Words: cmp.Words + ".", Nothing: cmp.Total == 0}
	aq := ""
	if against != "" {
		aq = "&against=" + url.QueryEscape(against)
	}
	p.AgainstQ = against
	p.Against = []againstOption{{Value: "", Text: h.Box.Name + " now", Selected: cmp.Against == nil}}
	if list, err := s.opts.Core.List(ctx, snapshots.Owner(), snapshots.ListQuery{Box: h.Box.ID}); err == nil && len(list) > 0 {
		for _, o := range list[0].Snapshots {
			if o.ID == h.Snap.ID || o.State != snapshots.StateReady {
				continue
			}
			p.Against = append(p.Against, againstOption{Value: o.ID, Text: "‘" + o.Name + "’", Selected: cmp.Against != nil && cmp.Against.ID == o.ID})
		}
	}
	size := func(v *int64) string {
		if v == nil {
			return "—"
		}
		return snapshots.FileSizeWords(*v)
	}
	for _, ch := range cmp.Changes {
		row := changeRow{Change: ch.Change, Path: ch.Path, Type: ch.Type, Before: size(ch.Before), After: size(ch.After)}
		q := url.QueryEscape(ch.Path)
		switch {
		case ch.Change == providers.ChangeChanged && ch.Type == "file" && ch.Before != nil:
			row.Href = h.Base + "/diff?path=" + q + aq
		case ch.Change == providers.ChangeRemoved && ch.Type == "file":
			row.Href = h.Base + "/file?path=" + q
		case ch.Change == providers.ChangeRemoved && ch.Type == "dir":
			row.Href = h.Base + "/files?path=" + q
		}
		if ch.Type == "dir" {
			row.Path += "/"
		}
		p.Rows = append(p.Rows, row)
	}
	if cmp.Total > 0 {
		p.Range = fmt.Sprintf("%d–%d of %d", cmp.Offset+1, cmp.Offset+len(cmp.Changes), cmp.Total)
	}
	if cmp.Offset > 0 {
		p.Prev = fmt.Sprintf("%s/compare?offset=%d%s", h.Base, max(0, cmp.Offset-comparePageSize), aq)
	}
	if end := cmp.Offset + len(cmp.Changes); end < cmp.Total {
		p.Next = fmt.Sprintf("%s/compare?offset=%d%s", h.Base, end, aq)
	}
	s.render(w, r, http.StatusOK, "snapshot_compare", p)
}
