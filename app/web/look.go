package web

import (
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/web/pagemodel"
	"github.com/boxsnap/boxsnap/views"
)

// Looking inside a snapshot: the Browse, file, Compare and diff
// pages share a head: the box, the snapshot, where in its tree, and the two
// ways in (Browse files, Compare).

// crumb is one step of the path shown above a listing or a file.
type crumb struct {
	Name, Href string
}

// lookHead is what every page of a snapshot's inside shows first.
type lookHead struct {
	Box      *snapshots.Box
	Snap     *snapshots.Snapshot
	BoxHref  string
	Base     string // /boxes/{box}/snapshots/{id}
	Crumbs   []crumb
	Current  string // "browse" or "compare": which way in is current
	Taken    string // "taken yesterday at 23:39 by the agent in …"
	BackHref string
}

// lookHeadOf finds the snapshot of a page's path as the owner sees it.
func (s *Server) lookHeadOf(r *http.Request, current string) (lookHead, error) {
	sn, b, err := s.opts.Core.SnapshotOfBox(r.Context(), snapshots.Owner(), chi.URLParam(r, "box"), chi.URLParam(r, "id"))
	if err != nil {
		return lookHead{}, err
	}
	tz := s.opts.Core.TimeZone(r.Context())
	h := lookHead{Box: b, Snap: sn, Current: current,
		BoxHref: "/boxes/" + url.PathEscape(b.Name),
		Base:    fmt.Sprintf("/boxes/%s/snapshots/%s", url.PathEscape(b.Name), sn.ID)}
	h.Taken = "taken " + pagemodel.WhenAt(sn.TakenAt, time.Now(), tz)
	return h, nil
}

// crumbsOf are the steps of a path: the box's top folder, then each folder.
func (h lookHead) crumbsOf(p string) []crumb {
	out := []crumb{{Name: h.Box.Name, Href: h.Base + "/files"}}
	if p == "" {
		return out
	}
	parts := strings.Split(p, "/")
	for i := range parts {
		out = append(out, crumb{Name: parts[i], Href: h.Base + "/files?path=" + url.QueryEscape(strings.Join(parts[:i+1], "/"))})
	}
	return out
}

// modeWords is a mode as ls writes it: drwxr-xr-x.
func modeWords(typ string, mode uint32) string {
	kind := map[string]string{"dir": "d", "link": "l", "file": "-"}[typ]
	if kind == "" {
		kind = "?"
	}
	return kind + fs.FileMode(mode & 0o777).String()[1:]
}

func lookPage(title string) views.Page {
	return views.Page{Title: title, SignedIn: true, Nav: "boxes"}
}
