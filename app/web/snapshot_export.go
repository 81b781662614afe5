package web

import (
	"fmt"
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/contents"
	"github.com/boxsnap/boxsnap/app/web/pagemodel"
)

func (s *Server) showSnapshotExportDialog(w http.ResponseWriter, r *http.Request) {
	d, err := s.dialogs.ExportDialogOf(asked{r}, chi.URLParam(r, "box"), chi.URLParam(r, "id"))
	if err != nil {
		s.refused(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	s.render(w, r, http.StatusOK, "export", d)
}

// exportSnapshots streams the export file the dialog asked for; a refusal
// before the first byte shows the dialog again with its words.
func (s *Server) exportSnapshots(w http.ResponseWriter, r *http.Request) {
	box := chi.URLParam(r, "box")
	q := r.URL.Query()
	ex, err := s.opts.Contents.PlanExport(r.Context(), snapshots.Owner(), contents.ExportRequest{Box: box, Snapshots: q["snapshot"], Base: q.Get("base")})
	if err != nil {
		first := ""
		if len(q["snapshot"]) > 0 {
			first = q["snapshot"][0]
		}
		d, derr := s.dialogs.ExportDialogOf(asked{r}, box, first)
		if derr != nil {
			s.refused(w, r, err)
			return
		}
		d.Error = pagemodel.RefusalWords(err)
		s.render(w, r, statusOf(err), "export", d)
		return
	}
	longTransfer(w)
	w.Header().Set("Content-Type", "application/x-tar")
	w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", ex.FileName()))
	if _, err := ex.WriteTo(r.Context(), w); err != nil {
		s.logger(r).Warn("export cut short", "box", box, "err", err)
		panic(http.ErrAbortHandler) // an error to the client, never a whole file
	}
}
