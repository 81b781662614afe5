package snapshots

import (
	"context"
	"strings"
)

// DeleteDry is what a dry run of a delete answers: the snapshot that would
// go, what it frees, and the Delete dialog's words. A dry run changes
// nothing: no operation, no job, no pin.
type DeleteDry struct {
	Box      *Box
	Snapshot *Snapshot
	// FreedBytes is what deleting it frees where known (its own size), as
	// the delete's result says it.
	FreedBytes *int64
	// Lines are the Delete dialog's lines: what it frees, that it is kept,
	// that it is an undo.
	Lines []string
}

// DeleteDryRun checks a delete as Delete does (who may, the snapshot's
// eligibility now, with its pins) and says what it would delete and free,
// admitting nothing.
func (s *Service) DeleteDryRun(ctx context.Context, c Caller, req DeleteRequest) (*DeleteDry, error) {
	sn, b, err := s.SnapshotOfBox(ctx, c, req.Box, req.Snapshot)
	if err != nil {
		return nil, err
	}
	if err := MayAct(c, ActDelete, b, sn); err != nil {
		return nil, err
	}
	// The checks Delete's transaction makes under its locks, read without.
	if b, err = s.BoxByID(ctx, s.st.Pool, b.ID); err != nil {
		return nil, boxNotFound(req.Box)
	}
	if sn, err = s.SnapshotByID(ctx, s.st.Pool, sn.ID); err != nil {
		return nil, SnapshotNotFound(req.Snapshot)
	}
	pins, err := s.Pins(ctx, s.st.Pool, sn.ID, "")
	if err != nil {
		return nil, err
	}
	tz := s.TimeZone(ctx)
	if err := Eligible(sn, ChangeDelete, pins, s.now(), tz); err != nil {
		return nil, err
	}
	be, ok := s.BackendOf(b)
	return &DeleteDry{Box: b, Snapshot: sn, FreedBytes: freed(sn), Lines: DeleteDialogLines(b, sn, WhereWords(be, ok, b), tz)}, nil
}

// DeleteDryWords says what a delete would do, for a dry run's answer: the
// Delete dialog's question and lines, then that nothing changed.
func DeleteDryWords(d *DeleteDry) string {
	return DeleteAskWords(d.Snapshot.Name) + " " + strings.Join(d.Lines, " ") + " " + NothingChangedDryWords
}
