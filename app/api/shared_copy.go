package api

import (
	"fmt"
	"net/http"

	"github.com/boxsnap/boxsnap/app/wire"
)

// sharedCopy streams a share code's copy as an export file, to whoever
// holds the code: another install imports it (boxsnap snapshot redeem
// --from). The code is the only authority; it travels in the body, never
// in a URL that logs keep.
func (s snapshotMoves) sharedCopy(w http.ResponseWriter, r *http.Request) {
	var body wire.CodeBody
	if err := decode(r, &body, "code"); err != nil {
		s.fail(w, r, err)
		return
	}
	e, err := s.contents.PlanShared(r.Context(), body.Code)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	longTransfer(w)
	w.Header().Set("Content-Type", "application/x-tar")
	w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", e.FileName()))
	if err := e.WriteTo(r.Context(), w); err != nil {
		s.logger.Warn("shared copy cut short", "err", err)
		panic(http.ErrAbortHandler) // an error to the client, never a whole file
	}
}
