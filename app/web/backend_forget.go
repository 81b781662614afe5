package web

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/boxes"
	"github.com/boxsnap/boxsnap/app/web/pagemodel"
)

func (s *Server) goneBackends(r *http.Request) []pagemodel.GoneBackend {
	gone, err := s.boxes.GoneBackends(r.Context())
	if err != nil {
		return nil
	}
	var out []pagemodel.GoneBackend
	for _, g := range gone {
		size := ""
		if g.Bytes > 0 {
			size = " (" + snapshots.GB(g.Bytes) + ")"
		}
		n := pagemodel.Plural(g.Snapshots, "snapshot", "snapshots")
		out = append(out, pagemodel.GoneBackend{
			Words: fmt.Sprintf("%s is not in settings: its %s%s %s unavailable.", g.ID, n, size, pagemodel.Pick(g.Snapshots, "is", "are")),
			Href:  "/backends/" + url.PathEscape(g.ID) + "/forget?back=" + url.QueryEscape("/boxes/snapshots"),
		})
	}
	return out
}

func (s *Server) showForgetDialog(w http.ResponseWriter, r *http.Request) {
	d, err := s.dialogs.ForgetDialog(asked{r}, chi.URLParam(r, "backend"))
	if err != nil {
		s.refused(w, r, err)
		return
	}
	s.renderDialog(w, r, http.StatusOK, d)
}

func (s *Server) forgetBackend(w http.ResponseWriter, r *http.Request) {
	backend := chi.URLParam(r, "backend")
	d, err := s.dialogs.ForgetDialog(asked{r}, backend)
	if err != nil {
		s.refused(w, r, err)
		return
	}
	if r.PostFormValue("plan") != d.Fingerprint {
		d.Error = pagemodel.StaleWords
		s.renderDialog(w, r, http.StatusConflict, d)
		return
	}
	p, stayed, err := s.boxes.ForgetBackend(r.Context(), snapshots.Owner(), backend)
	if err != nil {
		s.refused(w, r, err)
		return
	}
	s.done(w, r, d.Back, strings.TrimSpace(boxes.ForgotWords(p, stayed)))
}
