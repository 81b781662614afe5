package fork

import (
	"context"
	"fmt"

	"github.com/boxsnap/boxsnap/app/operations"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/store/db"
	"github.com/boxsnap/boxsnap/providers"
)

// Steps of a fork after its copy, each recorded before it runs so a restart
// finishes or reports the fork.
const (
	StepForkArm   = "arm"   // the fork's links come up, before its first start
	StepForkCheck = "check" // the check before ready
	StepForkReady = "ready" // onboot, once the check passed
)

// armAndStart arms a fork's links, starts it, checks it before it is ready
// and only then sets it to start at its host's boot, on a backend whose
// forks wait to be armed (providers.Armer). A fork that fails the check is
// released, and the fork fails with why.
func (s *Forks) armAndStart(ctx context.Context, op *snapshots.Operation, be snapshots.Backend, box *snapshots.Box, source providers.SnapshotRef) error {
	armer, ok := be.Snap.(providers.Armer)
	g := snapshots.GuestOf(box)
	if ok {
		if err := s.k.Step(ctx, op, StepForkArm); err != nil {
			return err
		}
		if err := armer.ArmFork(ctx, g, false); err != nil {
			return fmt.Errorf("arm %s: %w", box.Name, err)
		}
	}
	if err := s.k.Step(ctx, op, string(providers.StepStart)); err != nil {
		return err
	}
	// The start's task is waited for by the job's snooze where the backend
	// can leave it (providers.TaskStarter): the fork resumes with its box,
	// arms it again and finds it running.
	var err error
	if ts, tok := be.Boxes.(providers.TaskStarter); tok {
		err = ts.StartRecorded(ctx, g, s.k.TaskRecorder(op))
	} else {
		err = be.Boxes.Start(ctx, g)
	}
	if operations.Pending(err) {
		return err
	}
	if err != nil {
		if !ok {
			s.logger.Warn("the fork did not start", "box", box.Name, "err", err)
			return nil
		}
		return fmt.Errorf("start %s: %w", box.Name, err)
	}
	if !ok {
		return nil
	}
	if err := s.k.Step(ctx, op, StepForkCheck); err != nil {
		return err
	}
	if err := armer.CheckFork(ctx, g, source); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if rerr := be.Boxes.Release(context.WithoutCancel(ctx), g); rerr != nil {
			s.logger.Warn("release a fork that failed its check", "box", box.Name, "err", rerr)
		} else {
			if err := s.st.CoreBoxSetState(context.WithoutCancel(ctx), s.st.Pool, db.CoreBoxSetStateParams{ID: box.ID, State: string(snapshots.BoxReleased)}); err != nil {
				s.logger.Error("release a box that failed its check", "box", box.Name, "err", err)
			}
		}
		return fmt.Errorf("%s failed the check before ready, so it was released: %s", box.Name, snapshots.Reason(err))
	}
	if err := s.k.Step(ctx, op, StepForkReady); err != nil {
		return err
	}
	if err := armer.ArmFork(ctx, g, true); err != nil {
		return fmt.Errorf("set %s to start at its host's boot: %w", box.Name, err)
	}
	return nil
}
