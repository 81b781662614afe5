package keep

import (
	"context"
	"time"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

// DeleteHistory deletes every automatic snapshot of a box once the person
// typed the box's name (moatbox's "Delete history"): saved and kept ones
// stay, and so does one an operation uses. It admits one operation that
// deletes them one by one; with none to delete it answers nil.
func (s *Keeps) DeleteHistory(ctx context.Context, c snapshots.Caller, boxRef, confirm, requestID string) (*snapshots.Operation, error) {
	if !c.IsPerson() {
		return nil, refusal(snapshots.CodeForbidden, onlyPersonDeletesHistoryWords)
	}
	if op, err := s.k.Repeated(ctx, c, requestID, snapshots.OpDeleteHistory, boxRef, ""); err != nil || op != nil {
		return op, err
	}
	b, err := s.k.Box(ctx, c, boxRef)
	if err != nil {
		return nil, err
	}
	if confirm != b.Name {
		return nil, refusal(snapshots.CodeInvalid, DeleteHistoryWords(b.Name))
	}
	if op, err := s.k.ExistingRequest(ctx, s.st.Pool, c, requestID, snapshots.OpDeleteHistory, nil); err != nil || op != nil {
		return op, err
	}
	return s.k.AdmitThin(ctx, c, b, snapshots.OpDeleteHistory, snapshots.ChangeDelete, requestID, func(all []*snapshots.Snapshot, pins map[string][]snapshots.Pin, _ *string) []string {
		var ids []string
		for _, sn := range all {
			if sn.Automatic && snapshots.Eligible(sn, snapshots.ChangeDelete, pins[sn.ID], s.now(), time.UTC) == nil && !sn.Kept() {
				ids = append(ids, sn.ID)
			}
		}
		return ids
	})
}
