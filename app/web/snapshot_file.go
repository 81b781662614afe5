package web

import (
	"net/http"
	"net/url"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/contents"
)

type filePage struct {
	Page     lookPageData
	Shown    *contents.Shown
	Name     string
	Size     string
	Mode     string
	When     string
	Download string
	Diff     string // this file compared with the box now
}

// showSnapshotFile shows one file of a snapshot: its text inline up to the
// cap, with words when it stops there; a binary file offered as a
// download; a link as a link.
func (s *Server) showSnapshotFile(w http.ResponseWriter, r *http.Request) {
	h, err := s.lookHeadOf(r, "browse")
	if err != nil {
		s.refused(w, r, err)
		return
	}
	f, err := s.opts.Contents.ShowFile(r.Context(), snapshots.Owner(), h.Snap.ID, r.URL.Query().Get("path"))
	if err != nil {
		s.refused(w, r, err)
		return
	}
	h.Crumbs = h.crumbsOf(f.Entry.Path)
	tz := s.opts.Core.TimeZone(r.Context())
	q := url.QueryEscape(f.Entry.Path)
	p := filePage{Page: lookPageData{lookHead: h, Title: f.Entry.Path + " in ‘" + h.Snap.Name + "’", SignedIn: true, Nav: "boxes"},
		Shown: f, Name: h.Crumbs[len(h.Crumbs)-1].Name, Size: snapshots.FileSizeWords(f.Entry.Size), Mode: modeWords(f.Entry.Type, f.Entry.Mode),
		When: f.Entry.ModTime.In(tz).Format("2 Jan 2006 15:04")}
	if f.Entry.Type == "file" {
		p.Download = h.Base + "/download?path=" + q
		if !f.Binary {
			p.Diff = h.Base + "/diff?path=" + q
		}
	}
	s.render(w, r, http.StatusOK, "snapshot_file", p)
}
