package web

import (
	"net/http"
	"time"

	"github.com/boxsnap/boxsnap/app/auth"
	"github.com/boxsnap/boxsnap/app/web/pagemodel"
	"github.com/boxsnap/boxsnap/views"
)

type tokensPage struct {
	Page              views.Page
	Tokens            []tokenRow
	NewToken, NewName string
	Error             string
}

// tokenRow is a token with its times in the install's time zone, as the
// other pages say them.
type tokenRow struct {
	auth.APIToken
	Made, Used string
}

func (s *Server) tokensPage(r *http.Request, w http.ResponseWriter, status int, p tokensPage) {
	list, err := s.opts.Auth.ListAPITokens(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	p.Page = views.Page{Title: "API tokens", SignedIn: true, Nav: "tokens"}
	tz, now := s.opts.Core.TimeZone(r.Context()), time.Now()
	for _, t := range list {
		row := tokenRow{APIToken: t, Made: pagemodel.WhenWords(t.CreatedAt, now, tz), Used: "never"}
		if t.LastUsedAt != nil {
			row.Used = pagemodel.WhenWords(*t.LastUsedAt, now, tz)
		}
		p.Tokens = append(p.Tokens, row)
	}
	// A page that shows a secret once must not be cached.
	w.Header().Set("Cache-Control", "no-store")
	s.render(w, r, status, "tokens", p)
}

// showTokens is the tokens page; after createToken's redirect it shows the
// new token, once.
func (s *Server) showTokens(w http.ResponseWriter, r *http.Request) {
	var p tokensPage
	if rv, ok := s.shown.take(r.URL.Query().Get("shown")); ok {
		p.NewToken, p.NewName = rv.Secret, rv.Name
	}
	s.tokensPage(r, w, http.StatusOK, p)
}
