package snapshots

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/boxsnap/boxsnap/app/operations"
	"github.com/boxsnap/boxsnap/providers"
)

// KeepResult is what a finished keep or unkeep answers.
type KeepResult struct {
	Snapshot  string     `json:"snapshot"`
	KeptUntil *time.Time `json:"keptUntil"`
}

// register has the engine ask the core's backends where their tasks got
// to; every kind of operation is registered by the seam that runs it.
func (s *Service) register() {
	s.ops.UseTasks(s.providerTask)
}

// Engine is the operation engine the core runs on; another part of
// boxsnap registers its kinds of operation with it.
func (s *Kernel) Engine() *operations.Engine { return s.ops }

// providerTask asks the backend of an operation's box where a task got to.
func (s *Kernel) providerTask(ctx context.Context, op *Operation, task providers.TaskRef) (providers.TaskOutcome, error) {
	if op.BoxID == nil {
		return providers.TaskOutcome{}, errors.New("an operation of no box has no provider task")
	}
	b, err := s.BoxByID(ctx, s.st.Pool, *op.BoxID)
	if err != nil {
		return providers.TaskOutcome{}, fmt.Errorf("read the box of %s: %w", op.ID, err)
	}
	be, err := s.Backend(b.BackendID)
	if err != nil {
		return providers.TaskOutcome{}, err
	}
	return be.Snap.ProviderTask(ctx, task)
}
