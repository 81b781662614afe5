package web

import (
	"net/http"
	"net/url"
	"path"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

// fileRow is one entry of a snapshot's folder on the Browse page.
type fileRow struct {
	Name, Href, Type, Mode, Size, When, Target string
	// Download is a file's or a folder's download.
	Download string
}

type filesPage struct {
	Page     lookPageData
	Entries  []fileRow
	Path     string
	Download string // this folder as a tar.gz
	Empty    string // what an empty folder says
	// SizeNote says which size is which: the files' here, the snapshot's
	// on its row.
	SizeNote string
}

// lookPageData is the layout's page and the head of a snapshot's inside.
type lookPageData struct {
	lookHead
	Title    string
	SignedIn bool
	Nav      string
	Flash    string
}

// showSnapshotFiles is the Browse page: one folder of a snapshot, folders
// first, with sizes, modes and times; links as links, never followed.
func (s *Server) showSnapshotFiles(w http.ResponseWriter, r *http.Request) {
	h, err := s.lookHeadOf(r, "browse")
	if err != nil {
		s.refused(w, r, err)
		return
	}
	l, err := s.opts.Contents.Browse(r.Context(), snapshots.Owner(), h.Snap.ID, r.URL.Query().Get("path"))
	if err != nil {
		s.refused(w, r, err)
		return
	}
	h.Crumbs = h.crumbsOf(l.Path)
	var note string
	if sn := h.Snap; sn.SizeBytes != nil && sn.SizeMeaning != nil && *sn.SizeMeaning == "own" {
		note = OwnSizeNoteWords(sn.Name, *sn.SizeBytes)
	}
	tz := s.opts.Core.TimeZone(r.Context())
	p := filesPage{Empty: snapshots.EmptyFolderWords, Page: lookPageData{lookHead: h, Title: "Browse ‘" + h.Snap.Name + "’ of " + h.Box.Name, SignedIn: true, Nav: "boxes"},
		Path: l.Path, Download: h.Base + "/download?path=" + url.QueryEscape(l.Path), SizeNote: note}
	for _, e := range l.Entries {
		row := fileRow{Name: path.Base(e.Path), Type: e.Type, Mode: modeWords(e.Type, e.Mode), When: e.ModTime.In(tz).Format("2 Jan 2006 15:04")}
		q := url.QueryEscape(e.Path)
		switch e.Type {
		case "dir":
			row.Href, row.Size = h.Base+"/files?path="+q, "—"
			row.Download = h.Base + "/download?path=" + q
		case "file":
			row.Href, row.Size = h.Base+"/file?path="+q, snapshots.FileSizeWords(e.Size)
			row.Download = h.Base + "/download?path=" + q
		case "link":
			row.Target, row.Size = e.Target, "—"
		default:
			row.Size = "—"
		}
		p.Entries = append(p.Entries, row)
	}
	s.render(w, r, http.StatusOK, "snapshot_files", p)
}
