package api

import (
	"net/http"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

// A dry run answers the plan the real call would carry out, after every
// check it runs, and changes nothing: every destructive tool takes dry_run,
// and its REST route ?dry_run=true, with the same answer.

// deleteDryAnswer is box_snapshot_delete's answer to dry_run: the snapshot
// that would go, what it frees, and the Delete dialog's words.
type deleteDryAnswer struct {
	Message    string   `json:"message"`
	DryRun     bool     `json:"dryRun"`
	Box        string   `json:"box"`
	Snapshot   string   `json:"snapshot"`
	Name       string   `json:"name"`
	FreedBytes *int64   `json:"freedBytes,omitempty"`
	Freed      string   `json:"freed"`
	Lines      []string `json:"lines"`
}

// resetDryAnswer is box_reset's answer to dry_run: what the box becomes,
// the logins kept, the undo taken first and what it takes.
type resetDryAnswer struct {
	Message   string   `json:"message"`
	DryRun    bool     `json:"dryRun"`
	Box       string   `json:"box"`
	From      string   `json:"from"`
	Logins    []string `json:"logins,omitempty"`
	Goes      []string `json:"goes,omitempty"`
	Undo      bool     `json:"undo"`
	UndoBytes *int64   `json:"undoBytes,omitempty"`
	UndoPrice string   `json:"undoPrice,omitempty"`
}

// dryRunParam reads ?dry_run=true.
func dryRunParam(r *http.Request) (bool, error) {
	switch r.URL.Query().Get("dry_run") {
	case "", "false", "0":
		return false, nil
	case "true", "1":
		return true, nil
	}
	return false, invalid("dry_run is true or false.")
}

// deleteDryRun answers a delete's dry run.
func (s *server) deleteDryRun(w http.ResponseWriter, r *http.Request, box, ref string) {
	d, err := s.core.DeleteDryRun(r.Context(), caller(r), snapshots.DeleteRequest{Box: box, Snapshot: ref})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	own := "own"
	writeJSON(w, http.StatusOK, deleteDryAnswer{Message: snapshots.DeleteDryWords(d), DryRun: true, Box: d.Box.Name,
		Snapshot: d.Snapshot.ID, Name: d.Snapshot.Name, FreedBytes: d.FreedBytes, Freed: snapshots.SizeOfWords(d.FreedBytes, &own), Lines: d.Lines})
}

// resetDryRun answers a reset's dry run.
func (s *server) resetDryRun(w http.ResponseWriter, r *http.Request, req snapshots.ResetRequest) {
	d, err := s.core.ResetDryRun(r.Context(), caller(r), req)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, resetDryAnswer{Message: snapshots.ResetDryWords(d), DryRun: true, Box: d.Box.Name, From: d.From,
		Logins: d.Logins, Goes: d.Goes, Undo: true, UndoBytes: d.UndoBytes, UndoPrice: d.UndoPrice})
}

// undoDryRun answers an undo's dry run: a restore's, to the box's newest
// undo.
func (s *server) undoDryRun(w http.ResponseWriter, r *http.Request, box string, force bool) {
	d, err := s.core.UndoDryRun(r.Context(), caller(r), box, force)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.writeRestoreDry(w, d)
}

// writeRestoreDry answers a restore's dry run, or an undo's.
func (s *server) writeRestoreDry(w http.ResponseWriter, d *snapshots.RestoreDry) {
	a := dryRunAnswer{Message: snapshots.DryRunWords(d), DryRun: true, Box: d.Box.Name, Snapshot: d.Snapshot.ID, Name: d.Snapshot.Name}
	if c := d.Changes; c != nil {
		a.Added, a.Removed, a.Changed, a.Total, a.Changes = &c.Added, &c.Removed, &c.Changed, &c.Total, c.Changes
	}
	writeJSON(w, http.StatusOK, a)
}
