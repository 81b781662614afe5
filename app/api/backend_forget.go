package api

import (
	"net/http"

	"github.com/boxsnap/boxsnap/app/wire"

	"github.com/boxsnap/boxsnap/app/snapshots/boxes"
)

func forgetOf(p *boxes.ForgetPlan) wire.ForgetAnswer {
	a := wire.ForgetAnswer{Backend: p.Backend, Lines: p.Lines, Bytes: p.Bytes, Words: p.Words, Snapshots: []string{}}
	for _, sn := range p.Snapshots {
		a.Snapshots = append(a.Snapshots, sn.ID)
	}
	return a
}

// checkForget says what forgetting a removed backend's snapshots would
// remove, and changes nothing: the person only.
func (s settingsRoutes) checkForget(w http.ResponseWriter, r *http.Request) {
	be := param(r, "backend")
	if err := checkRef("backend", be); err != nil {
		s.fail(w, r, err)
		return
	}
	p, err := s.boxes.ForgetBackendPlan(r.Context(), caller(r), be)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, forgetOf(p))
}

// forgetBackend removes the records of a removed backend's snapshots, and
// nothing on any backend: the person only.
func (s settingsRoutes) forgetBackend(w http.ResponseWriter, r *http.Request) {
	be := param(r, "backend")
	if err := checkRef("backend", be); err != nil {
		s.fail(w, r, err)
		return
	}
	p, stayed, err := s.boxes.ForgetBackend(r.Context(), caller(r), be)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	a := forgetOf(p)
	a.Words, a.Stayed = boxes.ForgotWords(p, stayed), stayed
	writeJSON(w, http.StatusOK, a)
}
