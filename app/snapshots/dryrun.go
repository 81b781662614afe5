package snapshots

import (
	"context"

	"github.com/boxsnap/boxsnap/providers"
)

// RestoreDry is what a dry run of a restore answers: what the restore would
// change and the plan's words. A dry run changes nothing: no operation, no
// job, no undo, no pin.
type RestoreDry struct {
	Box      *Box
	Snapshot *Snapshot
	// Changes is what differs between the snapshot and the box now (first
	// page), nil where the backend cannot tell.
	Changes *Comparison
	// Undo is set when the restore would take an undo first.
	Undo bool
	// RestartsProcesses says every process in the box ends.
	RestartsProcesses bool
}

// RestoreDryRun checks a restore as Restore does (who may, the guard, the
// plan, the room for the undo, the snapshot's eligibility now) and says what
// it would change, admitting nothing.
func (s *Service) RestoreDryRun(ctx context.Context, c Caller, req RestoreRequest) (*RestoreDry, error) {
	req.dryRun = true
	if c.Kind == CallerAgent {
		req.Replace = true // a dry run replaces nothing
	}
	if _, err := s.Restore(ctx, c, req); err != nil {
		return nil, err
	}
	b, sn, plan, err := s.Plan(ctx, c, req.Box, req.Snapshot)
	if err != nil {
		return nil, err
	}
	out := &RestoreDry{Box: b, Snapshot: sn, Undo: !req.NoUndo, RestartsProcesses: plan.Restore.RestartsProcesses}
	if s.preview == nil {
		return out, nil
	}
	if out.Changes, err = s.preview.RestorePreview(ctx, c, sn.ID); err != nil {
		return nil, err
	}
	return out, nil
}

// RestorePreviewer says what a restore to a snapshot would change (the
// Contents seam's RestorePreview): a dry run's Changes.
type RestorePreviewer interface {
	RestorePreview(ctx context.Context, c Caller, id string) (*Comparison, error)
}

// UseRestorePreview gives the kernel what a restore's dry run asks for its
// changes; without one a dry run's Changes is nil, as where the backend
// cannot tell.
func (s *Kernel) UseRestorePreview(p RestorePreviewer) { s.preview = p }

// restoreEligibleNow is the check a restore's admission makes in its
// transaction, read without locking: the box is ready, nothing is unsettled
// on it, and the snapshot may be restored now.
func (s *Service) restoreEligibleNow(ctx context.Context, b *Box, sn *Snapshot, ref string) error {
	b2, err := s.BoxByID(ctx, s.st.Pool, b.ID)
	if err != nil {
		return BoxNotFound(b.Name)
	}
	b = b2
	sn2, err := s.SnapshotByID(ctx, s.st.Pool, sn.ID)
	if err != nil {
		return SnapshotNotFound(ref)
	}
	sn = sn2
	pins, err := s.deletingPins(ctx, s.st.Pool, sn.ID, "")
	if err != nil {
		return err
	}
	if err := Eligible(sn, ChangeRestore, pins, s.now(), s.TimeZone(ctx)); err != nil {
		return err
	}
	if b.State != BoxReady {
		return refusal(CodeBusy, beingReleasedWords(b.Name))
	}
	return s.Unsettled(ctx, s.st.Pool, b)
}

// Comparison is a page of what differs between a snapshot and the box now,
// or another snapshot of the same box.
type Comparison struct {
	Snapshot *Snapshot `json:"-"`
	Box      *Box      `json:"-"`
	// Against is the other snapshot, nil for the box now.
	Against *Snapshot `json:"-"`
	// Added, Removed and Changed count every path that differs (folders
	// added or removed included), seen from the snapshot: added since,
	// removed since, changed since.
	Added   int `json:"added"`
	Removed int `json:"removed"`
	Changed int `json:"changed"`
	Total   int `json:"total"`
	// Offset and Changes are this page.
	Offset  int                    `json:"offset"`
	Changes []providers.FileChange `json:"changes"`
	// Words says the counts in the specification's words: "14 files
	// changed, 2 added, 1 removed since then".
	Words string `json:"words"`
}
