package web

import (
	"net/http"
	"net/url"
	"time"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/web/pagemodel"
	"github.com/boxsnap/boxsnap/views"
)

// threadRow is one thread's card: when it was made, in the install's time
// zone as every page says times, and a link to its boxes' snapshots.
type threadRow struct {
	*snapshots.Thread
	Made, Href string
}

type threadsTab struct {
	Page            views.Page
	Tabs            pagemodel.TabCounts
	Threads         []threadRow
	NewToken, Title string
	Error           string
}

func (s *Server) threadsTab(w http.ResponseWriter, r *http.Request, status int, p threadsTab) {
	ths, err := s.boxes.Threads(r.Context(), snapshots.Owner())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	tz := s.opts.Core.TimeZone(r.Context())
	now := time.Now()
	for _, t := range ths {
		p.Threads = append(p.Threads, threadRow{Thread: t, Made: pagemodel.WhenWords(t.CreatedAt, now, tz),
			Href: "/boxes/snapshots?q=" + url.QueryEscape(t.Title)})
	}
	p.Page = views.Page{Title: "Threads", SignedIn: true, Nav: "boxes", Flash: s.flash(w, r)}
	p.Tabs = s.tabCounts(r, "threads", -1)
	// A page that shows a thread's token once must not be cached.
	w.Header().Set("Cache-Control", "no-store")
	s.render(w, r, status, "threads", p)
}

// showThreads answers the Boxes page's Threads tab.
func (s *Server) showThreads(w http.ResponseWriter, r *http.Request) {
	var p threadsTab
	if rv, ok := s.shown.take(r.URL.Query().Get("shown")); ok {
		p.NewToken, p.Title = rv.Secret, rv.Name
	}
	s.threadsTab(w, r, http.StatusOK, p)
}
