package web

import (
	"fmt"
	"net/http"
	"net/url"

	"github.com/go-chi/chi/v5"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

// deleteHistoryDialog is Delete history…: every automatic snapshot of the
// box goes once its name is typed; saved and kept ones stay.
func (dlg *dialogBuilder) deleteHistoryDialog(r *http.Request, boxRef, _ string) (dialog, error) {
	ctx := r.Context()
	b, err := dlg.core.Box(ctx, snapshots.Owner(), boxRef)
	if err != nil {
		return dialog{}, err
	}
	hist, err := dlg.boxes.BoxHistorySettings(ctx, snapshots.Owner(), b.ID)
	if err != nil {
		return dialog{}, err
	}
	d := dialog{Kind: "delete-history", Title: fmt.Sprintf("Delete %s's history?", b.Name), Back: backOf(r, b.Name),
		Submit: "Delete history", Danger: true, Action: "/boxes/" + url.PathEscape(b.Name) + "/history/delete",
		Fingerprint: fmt.Sprintf("%s:%d", b.ID, hist.Count), NamePlaceholder: b.Name}
	d.Lines = append(d.Lines,
		fmt.Sprintf("Deletes %s of %s. They cannot come back.", plural(hist.Count, "automatic snapshot", "automatic snapshots"), b.Name),
		"Saved and kept snapshots stay, and so does one a restore or another operation uses now.",
		fmt.Sprintf("Type %s to confirm.", b.Name))
	if hist.Count == 0 {
		d.Disabled, d.Error = true, snapshots.NoAutomaticWords(b.Name)
	}
	return d, nil
}

func (s *Server) showDeleteHistoryDialog(w http.ResponseWriter, r *http.Request) {
	d, err := s.dialogs.deleteHistoryDialog(r, chi.URLParam(r, "box"), "")
	if err != nil {
		s.refused(w, r, err)
		return
	}
	s.renderDialog(w, r, http.StatusOK, d)
}

func (s *Server) deleteHistory(w http.ResponseWriter, r *http.Request) {
	box := chi.URLParam(r, "box")
	d, err := s.dialogs.deleteHistoryDialog(r, box, "")
	if err != nil {
		s.refused(w, r, err)
		return
	}
	if d.Disabled {
		s.renderDialog(w, r, http.StatusConflict, d)
		return
	}
	if _, err := s.opts.Core.DeleteHistory(r.Context(), snapshots.Owner(), box, r.PostFormValue("confirm"), ""); err != nil {
		d.Error = refusalWords(err)
		s.renderDialog(w, r, statusOf(err), d)
		return
	}
	s.reload(w, r, backOf(r, box), fmt.Sprintf("Deleting %s's automatic history.", box))
}
