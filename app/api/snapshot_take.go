package api

import (
	"net/http"

	"github.com/boxsnap/boxsnap/app/wire"

	"github.com/boxsnap/boxsnap/app/snapshots/take"
)

// takeSnapshot takes a snapshot of a box: 202 with the operation, or with
// ?wait=true, 200 once it is done, with its words.
func (s snapshotChanges) takeSnapshot(w http.ResponseWriter, r *http.Request) {
	box := param(r, "box")
	var body wire.TakeBody
	if err := decodeOptional(r, &body, "name, note, memory and request, all optional"); err != nil {
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
	op, _, err := s.take.Take(r.Context(), caller(r), take.TakeRequest{Box: box, Name: body.Name, Note: body.Note, Memory: body.Memory, RequestID: body.Request})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.answerOperation(w, r, op, wait)
}

// decodeOptional is decode for a body that may be left out.
func decodeOptional(r *http.Request, v any, takes string) error {
	if r.ContentLength == 0 && r.Header.Get("Transfer-Encoding") == "" {
		return nil
	}
	err := decode(r, v, takes)
	if bad, ok := err.(*badRequest); ok && bad.words == emptyBodyWords(takes) {
		return nil
	}
	return err
}
