package api

import (
	"net/http"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

// headParams are box_head's parameters.
type headParams struct {
	Box      string `json:"box"`
	Snapshot string `json:"snapshot"`
	Request  string `json:"request"`
}

// headAnswer is box_head's answer: the box's head now.
type headAnswer struct {
	Message  string `json:"message"`
	Box      string `json:"box"`
	Snapshot string `json:"snapshot"`
	Name     string `json:"name"`
}

// toolHead is box_head: a snapshot the thread sees becomes its box's head,
// without a restore; the box's next snapshot is taken from it.
func (s *server) toolHead(w http.ResponseWriter, r *http.Request) {
	var p headParams
	if err := decode(r, &p, "box and snapshot, and optionally request"); err != nil {
		s.fail(w, r, err)
		return
	}
	err := checkBoxAndSnapshot(p.Box, p.Snapshot)
	if err == nil {
		err = checkRequest(p.Request)
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	sn, err := s.core.ChooseHead(r.Context(), caller(r), p.Box, p.Snapshot)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, headAnswer{Box: sn.BoxName, Snapshot: sn.ID, Name: sn.Name,
		Message: snapshots.HeadSetWords(sn.Name, sn.BoxName)})
}
