package api

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

// listedFull is one snapshot as the REST API lists it: its record, with who
// took it, when and its size in words.
type listedFull struct {
	*snapshots.Snapshot
	By   string `json:"by"`
	When string `json:"when"`
	Size string `json:"size"`
	Undo bool   `json:"undo,omitempty"`
}

// boxSnapshots is one box with the snapshots the caller may see.
type boxSnapshots struct {
	Box     *snapshots.Box `json:"box"`
	OfLimit string         `json:"ofLimit"`
	// Count and Counted are the count every page shows for the box, by
	// the core's one rule (snapshots.CountOf).
	Count     string           `json:"count"`
	Counted   snapshots.Counts `json:"counted"`
	Message   string           `json:"message"`
	Snapshots []listedFull     `json:"snapshots"`
}

type listAnswer struct {
	Boxes []boxSnapshots `json:"boxes"`
}

// listSnapshots lists every box's snapshots the caller may see
// (?box=<name or ID> for one, ?kept=true for kept ones only, ?automatic=true
// for automatic ones only, false for saved ones only).
func (s *server) listSnapshots(w http.ResponseWriter, r *http.Request) {
	q := snapshots.ListQuery{Box: r.URL.Query().Get("box")}
	s.list(w, r, q)
}

// listBoxSnapshots lists one box's snapshots.
func (s *server) listBoxSnapshots(w http.ResponseWriter, r *http.Request) {
	s.list(w, r, snapshots.ListQuery{Box: param(r, "box")})
}

func (s *server) list(w http.ResponseWriter, r *http.Request, q snapshots.ListQuery) {
	if q.Box != "" {
		if err := checkRef("box", q.Box); err != nil {
			s.fail(w, r, err)
			return
		}
	}
	if k := r.URL.Query().Get("kept"); k != "" {
		kept, err := strconv.ParseBool(k)
		if err != nil {
			s.fail(w, r, invalid("kept is true or false."))
			return
		}
		q.Kept = kept
	}
	if a := r.URL.Query().Get("automatic"); a != "" {
		auto, err := strconv.ParseBool(a)
		if err != nil {
			s.fail(w, r, invalid("automatic is true or false."))
			return
		}
		q.Automatic = &auto
	}
	c := caller(r)
	ctx := r.Context()
	list, err := s.core.List(ctx, c, q)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	settings, err := s.core.Settings(ctx)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	tz := s.core.TimeZone(ctx)
	ans := listAnswer{Boxes: []boxSnapshots{}}
	for _, bs := range list {
		out := boxSnapshots{Box: boxView(c, bs.Box), Snapshots: []listedFull{}}
		counted := 0
		for _, sn := range bs.Snapshots {
			out.Snapshots = append(out.Snapshots, s.full(ctx, sn, tz))
			if !sn.IsUndo() && sn.State != snapshots.StateFailed && sn.State != snapshots.StateDeleting && sn.Guest == "current" {
				counted++
			}
		}
		out.OfLimit = countWords(counted, settings.PerBox)
		out.Counted = snapshots.CountOf(bs.Snapshots)
		out.Count = out.Counted.Words()
		out.Message = s.boxHoldsWords(bs.Box, len(bs.Snapshots))
		ans.Boxes = append(ans.Boxes, out)
	}
	writeJSON(w, http.StatusOK, ans)
}

func (s *server) full(ctx context.Context, sn *snapshots.Snapshot, tz *time.Location) listedFull {
	return listedFull{Snapshot: sn, By: s.byWords(ctx, sn), When: sn.TakenAt.In(tz).Format("Mon 2 Jan 15:04"),
		Size: snapshots.SizeOfWords(sn.SizeBytes, sn.SizeMeaning), Undo: sn.IsUndo()}
}

// boxView is a box as the caller may see it: an agent sees its own
// thread's workspace on it, never other threads'.
func boxView(c snapshots.Caller, b *snapshots.Box) *snapshots.Box {
	if c.Kind != snapshots.CallerAgent {
		return b
	}
	v := *b
	v.Presence.Workspaces = nil
	for _, ws := range b.Presence.Workspaces {
		if ws.Thread == c.Thread {
			v.Presence.Workspaces = append(v.Presence.Workspaces, ws)
		}
	}
	return &v
}
