package web

import (
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/views"
)

// exportDialog is the Export dialog: which of the box's snapshots go in the
// file, and what the receiver holds already.
type exportDialog struct {
	Page                     views.Page
	Title, Box, Action, Back string
	Error, First             string
	Disabled                 bool
	Snapshots                []exportChoice
}

type exportChoice struct {
	ID, Name, When string
	Checked        bool
}

func (dlg *dialogBuilder) exportDialogOf(r *http.Request, boxRef, ref string) (exportDialog, error) {
	ctx := r.Context()
	sn, b, err := dlg.core.SnapshotOfBox(ctx, snapshots.Owner(), boxRef, ref)
	if err != nil {
		return exportDialog{}, err
	}
	d := exportDialog{Page: views.Page{Title: "Export", SignedIn: true, Nav: "boxes"}, Title: fmt.Sprintf("Export ‘%s’", sn.Name),
		Box: b.Name, Action: "/boxes/" + url.PathEscape(b.Name) + "/export", Back: backOf(r, b.Name), First: sn.ID}
	if why := dlg.rows.exportWhy(b, sn); why != "" {
		d.Disabled, d.Error = true, why
		return d, nil
	}
	list, err := dlg.core.List(ctx, snapshots.Owner(), snapshots.ListQuery{Box: b.ID})
	if err != nil {
		return d, err
	}
	tz, now := dlg.core.TimeZone(ctx), time.Now()
	for _, bs := range list {
		for _, x := range bs.Snapshots {
			if x.State != snapshots.StateReady {
				continue
			}
			d.Snapshots = append(d.Snapshots, exportChoice{ID: x.ID, Name: x.Name, When: whenWords(x.TakenAt, now, tz), Checked: x.ID == sn.ID})
		}
	}
	return d, nil
}

func (s *Server) showSnapshotExportDialog(w http.ResponseWriter, r *http.Request) {
	d, err := s.dialogs.exportDialogOf(r, chi.URLParam(r, "box"), chi.URLParam(r, "id"))
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
	ex, err := s.opts.Core.Contents().PlanExport(r.Context(), snapshots.Owner(), snapshots.ExportRequest{Box: box, Snapshots: q["snapshot"], Base: q.Get("base")})
	if err != nil {
		first := ""
		if len(q["snapshot"]) > 0 {
			first = q["snapshot"][0]
		}
		d, derr := s.dialogs.exportDialogOf(r, box, first)
		if derr != nil {
			s.refused(w, r, err)
			return
		}
		d.Error = refusalWords(err)
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
