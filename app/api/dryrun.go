package api

import "net/http"

// answerDry answers a dry run (a destructive tool's dry_run, a route's
// ?dry_run=true): the plan the real call would carry out, after every
// check it runs, or err, the refusal it would give; nothing changes.
func (s *server) answerDry(w http.ResponseWriter, r *http.Request, plan any, err error) {
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, plan)
}

// dryRunParam reads ?dry_run=true.
func dryRunParam(r *http.Request) (bool, error) { return boolParam(r, "dry_run") }
