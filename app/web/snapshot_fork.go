package web

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/fork"
	"github.com/boxsnap/boxsnap/app/web/pagemodel"
	"github.com/boxsnap/boxsnap/providers"
)

func (s *Server) showForkDialog(w http.ResponseWriter, r *http.Request) {
	d, err := s.dialogs.ForkDialog(asked{r}, chi.URLParam(r, "box"), chi.URLParam(r, "id"))
	if err != nil {
		s.refused(w, r, err)
		return
	}
	s.renderDialog(w, r, http.StatusOK, d)
}

// forkSnapshot forks and opens the new box's page, starting: it shows the
// fork's progress until its operation ends.
func (s *Server) forkSnapshot(w http.ResponseWriter, r *http.Request) {
	d, box, id, ok := s.postedDialog(w, r, s.dialogs.ForkDialog)
	if !ok {
		return
	}
	name := strings.TrimSpace(r.PostFormValue("name"))
	if count, many, err := forkCount(r.PostFormValue("count"), d.MaxCount); err != nil || many {
		forkManyPost{s}.post(w, r, d, box, id, name, count, err)
		return
	}
	if name == "" {
		name = d.NamePlaceholder
	}
	op, err := s.opts.Forks.Fork(r.Context(), snapshots.Owner(), fork.ForkRequest{Box: box, Snapshot: id, Name: name,
		AsMachine: r.PostFormValue("where") == pagemodel.WhereMachine, RequestID: r.PostFormValue("request")})
	if err != nil {
		d.Error, d.Name = pagemodel.RefusalWords(err), name
		s.renderDialog(w, r, statusOf(err), d)
		return
	}
	next := fmt.Sprintf("/boxes/%s?fork=%s", url.PathEscape(s.forkTarget(op, name)), url.QueryEscape(op.ID))
	if r.Header.Get("HX-Request") == "true" {
		w.Header().Set("HX-Redirect", next)
		w.WriteHeader(http.StatusOK)
		return
	}
	http.Redirect(w, r, next, http.StatusSeeOther)
}

// forkTarget is the new box's name as the fork's operation records it.
func (s *Server) forkTarget(op *snapshots.Operation, fallback string) string {
	if p, err := s.opts.Forks.Kinds().Fork.Params(op); err == nil && p.Name != "" {
		return p.Name
	}
	return fallback
}

// forkingOf reads the fork operation named by ?fork= for box name: nil when
// there is none, or it is not this box's.
func (s *Server) forkingOf(r *http.Request, name string) *pagemodel.Forking {
	id := r.URL.Query().Get("fork")
	if id == "" {
		return nil
	}
	ctx := r.Context()
	op, err := s.opts.Core.Operation(ctx, snapshots.Owner(), id)
	if err != nil || op.Kind != snapshots.OpFork || s.forkTarget(op, "") != name {
		return nil
	}
	f := &pagemodel.Forking{Name: name, LiveURL: fmt.Sprintf("/boxes/%s/live?fork=%s", url.PathEscape(name), url.QueryEscape(op.ID))}
	source := "its source"
	if op.Target != nil {
		if sn, src, err := s.opts.Core.Snapshot(ctx, snapshots.Owner(), *op.Target); err == nil {
			f.From = fmt.Sprintf("from %s, ‘%s’", src.Name, sn.Name)
			source = src.Name
		}
	}
	switch op.State {
	case snapshots.OpRunning:
		f.Busy = true
		switch op.Step {
		case "fork":
			f.Step = "Copying its files"
		case string(providers.StepStart):
			f.Step = "Starting"
		case snapshots.StepWaiting, snapshots.StepQueued:
			f.Step = fmt.Sprintf("Waiting for %s's earlier operation", source)
		default:
			f.Step = pagemodel.StepWords(op.Step)
		}
	case snapshots.OpFailed:
		why := ""
		if op.Error != nil {
			why = *op.Error
		}
		f.Failed = snapshots.UnfinishedWords("The fork", why, "")
	case snapshots.OpUnknown:
		f.Failed = snapshots.UnknownWords(name, op)
	default:
		f.Goto = "/boxes/" + url.PathEscape(name)
	}
	return f
}
