package api

import "net/http"

// answer answers v, or the refusal err says: a dry run's plan (a
// destructive tool's dry_run, a route's ?dry_run=true) the real call would
// carry out, after every check it runs, changing nothing; a host's record.
func (s failer) answer(w http.ResponseWriter, r *http.Request, plan any, err error) {
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, plan)
}

// dryRunParam reads ?dry_run=true.
func dryRunParam(r *http.Request) (bool, error) { return boolParam(r, "dry_run") }

// waitAndDryRun reads a destructive route's ?wait=true, then its
// ?dry_run=true; a wait it cannot read is refused first.
func waitAndDryRun(r *http.Request) (wait, dry bool, err error) {
	if wait, err = waitParam(r); err != nil {
		return false, false, err
	}
	dry, err = dryRunParam(r)
	return wait, dry, err
}
