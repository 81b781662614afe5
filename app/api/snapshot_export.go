package api

import (
	"fmt"
	"net/http"

	"github.com/boxsnap/boxsnap/app/snapshots/contents"
)

// exportSnapshots streams an export file of one box's snapshots: the person
// only. GET /boxes/{box}/export?snapshot=A&snapshot=B[&base=C]. It is
// checked before a byte is sent, so a refusal is JSON in words; after that
// the file streams as it is made, with no copy of the whole anywhere.
func (s snapshotMoves) exportSnapshots(w http.ResponseWriter, r *http.Request) {
	box := param(r, "box")
	q := r.URL.Query()
	refs := q["snapshot"]
	err := checkRef("box", box)
	for _, ref := range refs {
		if err == nil {
			err = checkRef("snapshot", ref)
		}
	}
	if err == nil && len(refs) > MaxExportSnapshots {
		err = invalid("An export holds at most %d snapshots.", MaxExportSnapshots)
	}
	if err == nil && q.Get("base") != "" {
		err = checkRef("base", q.Get("base"))
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	ex, err := s.contents.PlanExport(r.Context(), caller(r), contents.ExportRequest{Box: box, Snapshots: refs, Base: q.Get("base")})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	longTransfer(w)
	w.Header().Set("Content-Type", "application/x-tar")
	w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", ex.FileName()))
	if _, err := ex.WriteTo(r.Context(), w); err != nil {
		// The answer has begun: the file is cut short, and an import of it
		// says so. The log says why.
		s.logger.Warn("export cut short", "box", box, "err", err)
		panic(http.ErrAbortHandler) // an error to the client, never a whole file
	}
}

// MaxExportSnapshots bounds the snapshots of one export file.
const MaxExportSnapshots = 100
