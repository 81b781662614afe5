package api

import (
	"github.com/boxsnap/boxsnap/app/wire"
	"net/http"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

// saveSnapshot makes an automatic snapshot an ordinary one (issue 16).
func (s *server) saveSnapshot(w http.ResponseWriter, r *http.Request) {
	box, ref := param(r, "box"), param(r, "snapshot")
	var body wire.SaveBody
	if err := decodeOptional(r, &body, "name, optional"); err != nil {
		s.fail(w, r, err)
		return
	}
	if err := checkBoxAndSnapshot(box, ref); err != nil {
		s.fail(w, r, err)
		return
	}
	sn, err := s.core.Save(r.Context(), caller(r), box, ref, body.Name)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, s.full(r.Context(), sn, s.core.TimeZone(r.Context())))
}

// unsaveSnapshot makes a saved snapshot automatic again.
func (s *server) unsaveSnapshot(w http.ResponseWriter, r *http.Request) {
	box, ref := param(r, "box"), param(r, "snapshot")
	if err := checkBoxAndSnapshot(box, ref); err != nil {
		s.fail(w, r, err)
		return
	}
	sn, err := s.core.Unsave(r.Context(), caller(r), box, ref)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, s.full(r.Context(), sn, s.core.TimeZone(r.Context())))
}

// boxHistory answers a box's history settings.
func (s *server) boxHistory(w http.ResponseWriter, r *http.Request) {
	box := param(r, "box")
	if err := checkRef("box", box); err != nil {
		s.fail(w, r, err)
		return
	}
	h, err := s.core.Boxes().BoxHistorySettings(r.Context(), caller(r), box)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, h)
}

// setBoxHistory sets a box's history settings: the person only.
func (s *server) setBoxHistory(w http.ResponseWriter, r *http.Request) {
	box := param(r, "box")
	var body wire.HistoryBody
	if err := decode(r, &body, "automatic and maxGiB (each true/false, a number, or null)"); err != nil {
		s.fail(w, r, err)
		return
	}
	if err := checkRef("box", box); err != nil {
		s.fail(w, r, err)
		return
	}
	h, err := s.core.Boxes().SetBoxHistory(r.Context(), caller(r), box, body.Automatic, body.MaxGiB)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, h)
}

// deleteHistory deletes a box's automatic snapshots once its name is typed:
// the person only. With none to delete it answers 200 and no operation.
func (s *server) deleteHistory(w http.ResponseWriter, r *http.Request) {
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
	op, err := s.core.DeleteHistory(r.Context(), caller(r), box, body.Confirm, body.Request)
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
