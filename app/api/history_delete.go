package api

import (
	"net/http"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/wire"
)

// deleteHistory deletes a box's automatic snapshots once its name is typed:
// the person only. With none to delete it answers 200 and no operation.
func (s boxRoutes) deleteHistory(w http.ResponseWriter, r *http.Request) {
	box := param(r, "box")
	var body wire.DeleteHistoryBody
	if err := decode(r, &body, "confirm (the box's name) and request, optional"); err != nil {
		s.fail(w, r, err)
		return
	}
	wait, err := waitParam(r)
	if err == nil {
		err = checkRef("box", box)
	}
	if err == nil {
		err = checkRequest(body.Request)
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	op, err := s.keeps.DeleteHistory(r.Context(), caller(r), box, body.Confirm, body.Request)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if op == nil {
		writeJSON(w, http.StatusOK, wire.WordsAnswer{Words: snapshots.NoHistoryToDeleteWords(body.Confirm)})
		return
	}
	s.answerOperation(w, r, op, wait)
}
