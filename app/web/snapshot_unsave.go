package web

import (
	"fmt"
	"net/http"
	"net/url"

	"github.com/go-chi/chi/v5"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

// unsaveDialog asks before a saved snapshot goes back to the automatic
// history, where thinning may delete it: focus starts on Cancel.
func (dlg *dialogBuilder) unsaveDialog(r *http.Request, boxRef, ref string) (dialog, error) {
	sn, b, err := dlg.core.SnapshotOfBox(r.Context(), snapshots.Owner(), boxRef, ref)
	if err != nil {
		return dialog{}, err
	}
	d := dialog{Kind: "unsave", Title: fmt.Sprintf("Unsave ‘%s’?", sn.Name), Back: backOf(r, b.Name), Submit: "Unsave", Danger: true,
		Action: fmt.Sprintf("/boxes/%s/snapshots/%s/unsave", url.PathEscape(b.Name), sn.ID), Fingerprint: fingerprint(b, sn, nil,
			fmt.Sprint(sn.Automatic))}
	d.Lines = append(d.Lines, snapshots.UnsaveAsksWords(sn.Name, b.Name))
	if sn.Automatic {
		d.Disabled, d.Error = true, snapshots.AutomaticAlreadyWords(sn.Name)
	}
	return d, nil
}

func (s *Server) showUnsaveDialog(w http.ResponseWriter, r *http.Request) {
	d, err := s.dialogs.unsaveDialog(r, chi.URLParam(r, "box"), chi.URLParam(r, "id"))
	if err != nil {
		s.refused(w, r, err)
		return
	}
	s.renderDialog(w, r, http.StatusOK, d)
}

// unsaveSnapshot makes a saved snapshot automatic again, once its dialog
// was read; the page is read again, as the snapshot moves from the
// Snapshots card to the timeline.
func (s *Server) unsaveSnapshot(w http.ResponseWriter, r *http.Request) {
	d, box, id, ok := s.postedDialog(w, r, s.dialogs.unsaveDialog)
	if !ok {
		return
	}
	sn, err := s.opts.Core.Unsave(r.Context(), snapshots.Owner(), box, id)
	if err != nil {
		d.Error = refusalWords(err)
		s.renderDialog(w, r, statusOf(err), d)
		return
	}
	s.reload(w, r, backOf(r, box), snapshots.UnsavedWords(sn.Name, ""))
}
