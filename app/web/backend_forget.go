package web

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

// goneBackend is the Snapshots tab's notice for a backend no longer in
// settings whose snapshots are still recorded: they are unavailable, and
// the person may forget them.
type goneBackend struct {
	Words, Href string
}

func (s *Server) goneBackends(r *http.Request) []goneBackend {
	gone, err := s.boxes.GoneBackends(r.Context())
	if err != nil {
		return nil
	}
	var out []goneBackend
	for _, g := range gone {
		size := ""
		if g.Bytes > 0 {
			size = " (" + snapshots.GB(g.Bytes) + ")"
		}
		n := plural(g.Snapshots, "snapshot", "snapshots")
		out = append(out, goneBackend{
			Words: fmt.Sprintf("%s is not in settings: its %s%s %s unavailable.", g.ID, n, size, pick(g.Snapshots, "is", "are")),
			Href:  "/backends/" + url.PathEscape(g.ID) + "/forget?back=" + url.QueryEscape("/boxes/snapshots"),
		})
	}
	return out
}

// forgetDialog is "Forget its snapshots": it names them, their size and
// price, and says they may still exist and be billed.
func (dlg *dialogBuilder) forgetDialog(r *http.Request, backend string) (dialog, error) {
	d := dialog{Kind: "forget", Title: fmt.Sprintf("Forget the snapshots of %s?", backend), Back: backOf(r, ""),
		Action: "/backends/" + url.PathEscape(backend) + "/forget", Submit: "Forget its snapshots", Danger: true}
	if d.Back == "/boxes/" {
		d.Back = "/boxes/snapshots"
	}
	p, err := dlg.boxes.ForgetBackendPlan(r.Context(), snapshots.Owner(), backend)
	if err != nil {
		return d, err
	}
	d.Lines = []string{p.Words}
	d.Items = p.Lines
	d.Fingerprint = fingerprintForget(p)
	return d, nil
}

func fingerprintForget(p *snapshots.ForgetPlan) string {
	ids := make([]string, 0, len(p.Snapshots))
	for _, sn := range p.Snapshots {
		ids = append(ids, sn.ID)
	}
	return fingerprint(&snapshots.Box{ID: p.Backend}, nil, ids)
}

func (s *Server) showForgetDialog(w http.ResponseWriter, r *http.Request) {
	d, err := s.dialogs.forgetDialog(r, chi.URLParam(r, "backend"))
	if err != nil {
		s.refused(w, r, err)
		return
	}
	s.renderDialog(w, r, http.StatusOK, d)
}

func (s *Server) forgetBackend(w http.ResponseWriter, r *http.Request) {
	backend := chi.URLParam(r, "backend")
	d, err := s.dialogs.forgetDialog(r, backend)
	if err != nil {
		s.refused(w, r, err)
		return
	}
	if r.PostFormValue("plan") != d.Fingerprint {
		d.Error = staleWords
		s.renderDialog(w, r, http.StatusConflict, d)
		return
	}
	p, stayed, err := s.boxes.ForgetBackend(r.Context(), snapshots.Owner(), backend)
	if err != nil {
		s.refused(w, r, err)
		return
	}
	s.done(w, r, d.Back, strings.TrimSpace(snapshots.ForgotWords(p, stayed)))
}
