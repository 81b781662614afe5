package snapshots

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/boxsnap/boxsnap/app/operations"
	"github.com/boxsnap/boxsnap/providers"
)

// Kinds are the core's kinds of operation, each registered with the engine
// with its typed parameters and result: a runner's done end is the result
// it returns, which the engine records, and the API and the web read an
// operation's result through them (Kinds().Fork.Result(op)); the take's
// kind is package take's (take.Take.Kinds), the keep's, the unkeep's, the
// delete's and the expiry's are package keep's (keep.Keeps.Kinds).
type Kinds struct {
	Fork *operations.Kind[ForkParams, ForkResult]
}

// KeepResult is what a finished keep or unkeep answers.
type KeepResult struct {
	Snapshot  string     `json:"snapshot"`
	KeptUntil *time.Time `json:"keptUntil"`
}

// ReleaseResult is what a finished release answers: into the trash (Trash,
// until when, its final snapshot), or released.
type ReleaseResult struct {
	Box   string     `json:"box"`
	Trash bool       `json:"trash,omitempty"`
	Until *time.Time `json:"until,omitempty"`
	Final string     `json:"finalSnapshot,omitempty"`
}

// register registers the core's kinds of operation with the engine.
func (s *Service) register() {
	e := s.ops
	s.kinds = Kinds{
		Fork: operations.Register(e, OpFork, s.runFork),
	}
	e.UseTasks(s.providerTask)
}

// Kinds are the core's registered kinds of operation.
func (s *Kernel) Kinds() *Kinds { return &s.kinds }

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
