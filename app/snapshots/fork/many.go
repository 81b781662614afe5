package fork

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/store"
)

// ForkManyRequest asks for Count new boxes from one snapshot.
type ForkManyRequest struct {
	Box      string
	Snapshot string
	// Name names the new boxes name-1 … name-N; empty names them as a
	// single fork names one, each the next free name.
	Name  string
	Count int
	// AsMachine makes every fork one of the person's machines; an agent's
	// forks are always its own thread's.
	AsMachine bool
	// RequestID makes a repeat the same forks: the i-th fork's operation
	// holds ManyRequestID(RequestID, i).
	RequestID string
}

// ManyRequestID is the request ID of the i-th (from 1) of a call's forks.
func ManyRequestID(requestID string, i int) string {
	if requestID == "" {
		return ""
	}
	return fmt.Sprintf("%s%s%d", requestID, keySeparator, i)
}

// MaxCount is the most boxes one fork call makes here.
func (s *Forks) MaxCount() int { return s.maxCount }

// ForkMany admits Count forks of one snapshot, all or none: every check
// (the count, each new name, the snapshot's plan, the box's state) passes
// for all of them before any is admitted, and all are admitted in one
// transaction. Each is then an operation of its own in the source box's
// order, run on the host it is asked on (as Fork's), with its own new
// box, identity and result, so a fork that fails leaves the others as
// they are. It answers the operations in the order
// of their names.
func (s *Forks) ForkMany(ctx context.Context, c snapshots.Caller, req ForkManyRequest) ([]*snapshots.Operation, error) {
	if req.Count < 1 || req.Count > s.maxCount {
		return nil, refusal(snapshots.CodeInvalid, forkCountWords(req.Count, s.maxCount))
	}
	if ops, err := s.repeatedMany(ctx, c, req); err != nil || ops != nil {
		return ops, err
	}
	sn, b, err := s.k.SnapshotOfBox(ctx, c, req.Box, req.Snapshot)
	if err != nil {
		return nil, err
	}
	if err := snapshots.MayAct(c, snapshots.ActFork, b, sn); err != nil {
		return nil, err
	}
	if op, err := s.k.ExistingRequest(ctx, s.st.Pool, c, ManyRequestID(req.RequestID, 1), snapshots.OpFork, &sn.ID); err != nil || op != nil {
		if err != nil {
			return nil, err
		}
		return s.repeatedMany(ctx, c, req)
	}
	names, err := s.manyNames(ctx, c, b.Name, strings.TrimSpace(req.Name), req.Count)
	if err != nil {
		return nil, err
	}
	return s.admitForks(ctx, c, b, sn, forks{names: names, requestID: func(i int) string { return ManyRequestID(req.RequestID, i+1) },
		asMachine: req.AsMachine, snapRef: req.Snapshot})
}

// repeatedMany answers the operations a repeated call's request ID made,
// or nil when it made none.
func (s *Forks) repeatedMany(ctx context.Context, c snapshots.Caller, req ForkManyRequest) ([]*snapshots.Operation, error) {
	if req.RequestID == "" {
		return nil, nil
	}
	var ops []*snapshots.Operation
	for i := 1; i <= req.Count; i++ {
		op, err := s.k.Repeated(ctx, c, ManyRequestID(req.RequestID, i), snapshots.OpFork, req.Box, req.Snapshot)
		if err != nil {
			return nil, err
		}
		if op == nil {
			if i == 1 {
				return nil, nil
			}
			// The first call made fewer forks: the count is not the same.
			return nil, refusal(snapshots.CodeRequestReused, forkCountReusedWords(req.RequestID, i-1))
		}
		ops = append(ops, op)
	}
	if op, err := s.k.Repeated(ctx, c, ManyRequestID(req.RequestID, req.Count+1), snapshots.OpFork, req.Box, req.Snapshot); err != nil || op != nil {
		if err != nil {
			return nil, err
		}
		return nil, refusal(snapshots.CodeRequestReused, forkCountReusedWords(req.RequestID, 0))
	}
	return ops, nil
}

// manyNames are the names of count new boxes: with a name, name itself
// for one and name-1 … name-count for more; with none, the first count
// free names a single fork of box would take in turn (amber-fox-fork,
// amber-fox-fork-2, …). Every name is checked free before any box is
// made.
func (s *Forks) manyNames(ctx context.Context, c snapshots.Caller, box, name string, count int) ([]string, error) {
	if name == "" {
		names := make([]string, 0, count)
		for i := 1; len(names) < count; i++ {
			n := box + "-fork"
			if i > 1 {
				n = fmt.Sprintf("%s-fork-%d", box, i)
			}
			_, err := s.k.BoxByName(ctx, n)
			switch {
			case errors.Is(err, store.ErrNotFound):
				names = append(names, n)
			case err != nil:
				return nil, err
			}
		}
		return names, nil
	}
	if err := snapshots.CheckBoxName(name); err != nil {
		return nil, err
	}
	names := []string{name}
	if count > 1 {
		names = make([]string, count)
		for i := range names {
			names[i] = fmt.Sprintf("%s-%d", name, i+1)
			if err := snapshots.CheckBoxName(names[i]); err != nil {
				return nil, err
			}
		}
	}
	var taken, unseen []string
	for _, n := range names {
		switch existing := s.holder(ctx, n); {
		case existing == nil:
		case snapshots.MayAct(c, snapshots.ActSee, existing, nil) != nil:
			unseen = append(unseen, n)
		default:
			taken = append(taken, n)
		}
	}
	if len(unseen) > 0 {
		// A name held by a box the caller cannot see is refused without
		// saying a box holds it: another thread's names stay its own.
		return nil, refusal(snapshots.CodeConflict, forkNamesUnusableWords(unseen))
	}
	if len(taken) > 0 {
		return nil, refusal(snapshots.CodeConflict, forkNamesTakenWords(taken))
	}
	return names, nil
}
