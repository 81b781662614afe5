package restore

import (
	"context"
	"errors"
	"maps"

	"github.com/jackc/pgx/v5"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/store/db"
	"github.com/boxsnap/boxsnap/providers"
)

// recordResetRun keeps the box's recorded run (snapshots.BoxRun) as the
// reset left the box: the command spec gives, and its user, environment
// and limits when spec gives them, as the local backend's reset applies
// them; so a later move onto another host carries what the box runs with
// now. A box with no record of its own is left so; a failure is logged
// without the run, whose environment may hold secrets.
func (s *Resets) recordResetRun(ctx context.Context, boxID string, spec providers.BoxSpec) {
	raw, err := s.st.BoxRunByBox(ctx, s.st.Pool, boxID)
	if errors.Is(err, pgx.ErrNoRows) {
		return
	}
	var run snapshots.BoxRun
	if err == nil {
		run, err = snapshots.UnmarshalRun(raw)
	}
	if err == nil {
		if spec.Command != "" {
			run.Command = spec.Command
		}
		if spec.User != "" || spec.Env != nil || spec.Limits != (providers.BoxLimits{}) {
			run.User, run.Env, run.Limits = spec.User, maps.Clone(spec.Env), spec.Limits
		}
		raw, err = snapshots.MarshalRun(run)
	}
	if err == nil {
		err = s.st.BoxRunSet(ctx, s.st.Pool, db.BoxRunSetParams{BoxID: boxID, Run: raw})
	}
	if err != nil {
		s.logger.Warn("record how a reset box runs", "box", boxID, "err", err)
	}
}
