package snapshots

import (
	"context"

	"github.com/boxsnap/boxsnap/providers"
)

// Plan reads what the box's backend would do now for a take, and for a
// restore, keep and fork of snapshot ref when it is given (every dialog asks
// for a plan first). It changes nothing.
func (s *Service) Plan(ctx context.Context, c Caller, boxRef, ref string) (*Box, *Snapshot, providers.SnapshotPlan, error) {
	var sn *Snapshot
	var b *Box
	var err error
	if ref != "" {
		sn, b, err = s.SnapshotOfBox(ctx, c, boxRef, ref)
	} else {
		b, err = s.Box(ctx, c, boxRef)
	}
	if err != nil {
		return nil, nil, providers.SnapshotPlan{}, err
	}
	be, err := s.Backend(b.BackendID)
	if err != nil {
		return b, sn, providers.SnapshotPlan{}, err
	}
	var r *providers.SnapshotRef
	if sn != nil {
		rr := RefOf(sn, b)
		r = &rr
	}
	plan, err := s.PlanNow(ctx, b, be, r)
	if err != nil {
		return b, sn, plan, s.PlanError(b, be, err)
	}
	return b, sn, plan, nil
}

// Snapshotting says what a box's backend offers for its kind, or nil.
func (s *Kernel) Snapshotting(b *Box) *providers.Snapshotting {
	be, ok := s.backends[b.BackendID]
	if !ok {
		return nil
	}
	return be.Snap.Snapshotting(b.Kind)
}

// BackendOf is the box's backend, for its label and what it offers.
func (s *Kernel) BackendOf(b *Box) (Backend, bool) {
	be, ok := s.backends[b.BackendID]
	return be, ok
}

// Snapshotting says what the backend offers for a kind of box, or nil. The
// pages and the API ask a backend through the core's methods, never its
// Snap or Boxes, which are the core's and the wiring's (app/boot).
func (be Backend) Snapshotting(kind string) *providers.Snapshotting {
	if be.Snap == nil {
		return nil
	}
	return be.Snap.Snapshotting(kind)
}

// Exports says whether the backend writes its snapshots to export files.
func (be Backend) Exports() bool {
	_, ok := be.Snap.(providers.Exporter)
	return ok
}
