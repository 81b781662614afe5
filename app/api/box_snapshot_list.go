package api

import (
	"net/http"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

// listBoxSnapshots lists one box's snapshots.
func (s snapshotReads) listBoxSnapshots(w http.ResponseWriter, r *http.Request) {
	s.list(w, r, snapshots.ListQuery{Box: param(r, "box")})
}
