package web

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/contents"
)

// diffLine is one line of a unified diff, with its kind for its colour.
type diffLine struct {
	Class, Text string
}

type diffPage struct {
	Page    lookPageData
	Path    string
	With    string
	Words   string
	Lines   []diffLine
	Back    string
	Shown   string // the file in the snapshot
	Against string
}

// showSnapshotDiff is one text file's unified diff between a snapshot and
// the box now, or another snapshot of the box.
func (s *Server) showSnapshotDiff(w http.ResponseWriter, r *http.Request) {
	h, err := s.lookHeadOf(r, "compare")
	if err != nil {
		s.refused(w, r, err)
		return
	}
	q := r.URL.Query()
	against := q.Get("against")
	diff, err := s.opts.Contents.DiffFile(r.Context(), snapshots.Owner(), h.Snap.ID, against, q.Get("path"))
	if err != nil {
		s.refused(w, r, err)
		return
	}
	clean, _ := contents.CleanPath(q.Get("path"))
	h.Crumbs = h.crumbsOf(clean)
	with := h.Box.Name + " now"
	aq := ""
	if against != "" {
		with = "‘" + against + "’"
		if o, _, err := s.opts.Core.SnapshotOfBox(r.Context(), snapshots.Owner(), h.Box.ID, against); err == nil {
			with = "‘" + o.Name + "’"
		}
		aq = "?against=" + url.QueryEscape(against)
	}
	p := diffPage{Page: lookPageData{lookHead: h, Title: clean + ": ‘" + h.Snap.Name + "’ and " + with, SignedIn: true, Nav: "boxes"},
		Path: clean, With: with, Back: h.Base + "/compare" + aq, Shown: h.Base + "/file?path=" + url.QueryEscape(clean), Against: against}
	if diff == "" {
		p.Words = "The same in ‘" + h.Snap.Name + "’ and " + with + "."
	} else {
		p.Words = "Lines marked − are in ‘" + h.Snap.Name + "’; lines marked + are in " + with + "."
	}
	for _, l := range strings.SplitAfter(diff, "\n") {
		if l == "" {
			continue
		}
		l = strings.TrimSuffix(l, "\n")
		c := "ctx"
		switch {
		case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"):
			c = "file"
		case strings.HasPrefix(l, "@@"):
			c = "hunk"
		case strings.HasPrefix(l, "+"):
			c = "add"
		case strings.HasPrefix(l, "-"):
			c = "del"
		}
		p.Lines = append(p.Lines, diffLine{Class: c, Text: l})
	}
	s.render(w, r, http.StatusOK, "snapshot_diff", p)
}
