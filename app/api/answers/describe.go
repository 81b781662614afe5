package answers

import (
	"context"
	"fmt"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/restore"
)

// Describe says what a finished operation did, in the specification's
// words.
func (s Lookups) Describe(ctx context.Context, c snapshots.Caller, op *snapshots.Operation) string {
	box := s.BoxName(ctx, c, op)
	switch op.Kind {
	case snapshots.OpTake:
		if res, err := s.Take.Kinds().Take.Result(op); err == nil {
			return TakeWords(box, res, s.PriceOf(ctx, c, res.Snapshot))
		}
	case snapshots.OpRestore:
		if res, err := s.Restores.Kinds().Restore.Result(op); err == nil {
			return s.RestoreWords(ctx, c, box, res)
		}
	case snapshots.OpDelete, snapshots.OpExpiry:
		if res, err := s.Keeps.Kinds().Delete.Result(op); err == nil {
			return DeleteWords(box, res)
		}
	case snapshots.OpKeep, snapshots.OpUnkeep:
		if res, err := s.Keeps.Kinds().Keep.Result(op); err == nil {
			return s.KeepWords(ctx, c, box, op.Kind == snapshots.OpUnkeep, res)
		}
	case snapshots.OpFork:
		if res, err := s.Forks.Kinds().Fork.Result(op); err == nil && res.Name != "" {
			return ForkWords(res)
		}
	case snapshots.OpRelease:
		if res, err := s.Boxes.Kinds().Release.Result(op); err == nil && res.Trash && res.Until != nil {
			return snapshots.TrashedWords(box, *res.Until, s.Core.TimeZone(ctx))
		}
		return fmt.Sprintf("Released %s.", box)
	case snapshots.OpUntrash:
		if res, err := s.Boxes.Kinds().Untrash.Result(op); err == nil {
			return snapshots.UntrashedWords(box, res.Started)
		}
	case snapshots.OpReset:
		if res, err := s.Restores.Kinds().Reset.Result(op); err == nil {
			return restore.ResetDoneWords(box, res)
		}
	case snapshots.OpImport:
		if res, err := s.Contents.ImportResultOf(op); err == nil {
			return res.Words
		}
	}
	return fmt.Sprintf("The %s is done.", op.Kind)
}
