package api

import (
	"net/http"
	"strconv"
)

// snapshotDiff compares a snapshot with the box now, or with another
// snapshot of the same box (?against=), a page at a time (?offset=,
// ?limit=); with ?path= it answers that text file's unified diff.
func (s snapshotReads) snapshotDiff(w http.ResponseWriter, r *http.Request) {
	box, ref := param(r, "box"), param(r, "snapshot")
	if err := checkBoxAndSnapshot(box, ref); err != nil {
		s.fail(w, r, err)
		return
	}
	q := r.URL.Query()
	offset, err := intParam(q.Get("offset"), "offset")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	limit, err := intParam(q.Get("limit"), "limit")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	a, err := s.Compare(r.Context(), caller(r), box, ref, q.Get("against"), q.Get("path"), offset, limit)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, a)
}

func intParam(v, name string) (int, error) {
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n > 1<<30 {
		return 0, invalid("%s must be a whole number, 0 or more.", name)
	}
	return n, nil
}
