package api

import "net/http"

// releaseBox releases a box: its snapshots that nobody kept go with it
// (?request=<ID> makes a repeat the same release; ?wait=true answers once
// it is done).
func (s *server) releaseBox(w http.ResponseWriter, r *http.Request) {
	ref := param(r, "box")
	request := r.URL.Query().Get("request")
	wait, err := waitParam(r)
	if err == nil {
		err = checkRef("box", ref)
	}
	if err == nil {
		err = checkRequest(request)
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	op, err := s.core.ReleaseBox(r.Context(), caller(r), ref, request)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.answerOperation(w, r, op, wait)
}
