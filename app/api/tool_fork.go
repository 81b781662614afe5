package api

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/boxsnap/boxsnap/app/api/toolparams"
	"github.com/boxsnap/boxsnap/app/wire"

	"github.com/boxsnap/boxsnap/app/api/answers"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/fork"
)

// ForkTakeName is the name of the snapshot box_fork takes when it forks the
// box now, "for a fork": the fork seam's.
const ForkTakeName = fork.TakeName

const forkTakes = "snapshot (its name or ID, with box for a name), or box alone to fork the box now; and optionally name, count and request"

// toolFork is box_fork: a new box of the thread from a snapshot, or from
// the box now, for which it takes a snapshot first. It checks before it
// takes, deletes the snapshot it took if the fork is still refused, and
// passes on the take's words.
func (s agentTools) toolFork(w http.ResponseWriter, r *http.Request) {
	p, ok := openTool(s.failer, w, r, forkTakes, func(p *toolparams.ForkToolParams) toolOpening {
		return toolOpening{refs: checkForkParams(*p), request: p.Request}
	})
	if !ok {
		return
	}
	if p.Count != nil {
		s.many.tool(w, r, p)
		return
	}
	ctx, c := r.Context(), caller(r)
	ref, took, tookName, tookWords := p.Snapshot, "", "", ""
	if ref == "" {
		tk, ok := s.forkCapture(w, r, p)
		if !ok {
			return
		}
		ref, took, tookName, tookWords = tk.id, tk.id, tk.name, tk.words
	}
	op, err := s.forks.Fork(ctx, c, fork.ForkRequest{Box: p.Box, Snapshot: ref, Name: p.Name, RequestID: p.Request})
	if err != nil {
		if ref, ok := snapshots.AsRefusal(err); ok && took != "" && p.Request != "" && ref.Code == snapshots.CodeNotFound {
			// The snapshot this request's take made is gone: a fork of the
			// same request was refused before, and deleted it.
			err = &snapshots.Refusal{Code: snapshots.CodeConflict,
				Words: fmt.Sprintf("The fork of request %s was refused before, and boxsnap deleted ‘%s’ (%s), the snapshot it took for it. Send box_fork with a new request to try again.", p.Request, tookName, took)}
		} else if took != "" {
			err = s.undoForkTake(ctx, c, took, tookName, err)
		}
		s.fail(w, r, err)
		return
	}
	if op, err = s.waitOp(ctx, c, op.ID); err != nil {
		s.fail(w, r, err)
		return
	}
	if s.endedBadly(w, r, op) {
		return
	}
	if op.State != snapshots.OpDone {
		writeJSON(w, http.StatusAccepted, wire.OperationAnswer{Operation: op, Message: runningWords(op)})
		return
	}
	res, err := s.forks.Kinds().Fork.Result(op)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	b, err := s.core.Box(ctx, c, res.Box)
	if err != nil {
		s.fail(w, r, fmt.Errorf("read the fork %s: %w", res.Box, err))
		return
	}
	msg := answers.ForkWords(res)
	if tookWords != "" {
		msg = tookWords + " " + msg
	}
	forked := ""
	if op.Target != nil {
		forked = *op.Target
	}
	writeJSON(w, http.StatusOK, wire.ForkAnswer{Box: answers.BoxView(c, b), Message: msg, Operation: op.ID, From: res.From, Forked: forked, Took: tookWords})
}

// checkForkParams refuses box_fork's input that names nothing, before
// anything is asked of the core.
func checkForkParams(p toolparams.ForkToolParams) error {
	if p.Snapshot == "" && strings.TrimSpace(p.Box) == "" {
		return invalid("box_fork needs snapshot (its name or ID), or box to fork the box now.")
	}
	if p.Snapshot != "" {
		if err := checkRef("snapshot", p.Snapshot); err != nil {
			return err
		}
		if p.Box == "" && !snapshots.ValidID(snapshots.PrefixSnapshot, p.Snapshot) {
			return invalid("A snapshot's name needs its box: pass box too, or the snapshot's ID.")
		}
	}
	if p.Box != "" {
		if err := checkRef("box", p.Box); err != nil {
			return err
		}
	}
	if err := checkForkName(p.Name); err != nil {
		return err
	}
	if p.Count != nil && *p.Count < 1 {
		return invalid(forkCountRangeWords)
	}
	return checkRequest(p.Request)
}

// forkCountRangeWords refuse a fork's count below 1.
const forkCountRangeWords = "count is how many boxes to fork into, 1 or more; leave it out for one."

// checkForkName refuses a new box's name that breaks the machine rule.
func checkForkName(name string) error {
	if name = strings.TrimSpace(name); name != "" {
		return snapshots.CheckBoxName(name)
	}
	return nil
}

// undoForkTake deletes the snapshot box_fork took when the fork is then
// refused, and says so after the fork's refusal.
func (s operations) undoForkTake(ctx context.Context, c snapshots.Caller, id, name string, refused error) error {
	ctx = context.WithoutCancel(ctx)
	op, err := s.Keeps.Delete(ctx, c, snapshots.DeleteRequest{Snapshot: id})
	if err == nil {
		op, err = s.waitOp(ctx, c, op.ID)
	}
	ref, ok := snapshots.AsRefusal(refused)
	if !ok {
		return refused
	}
	words := strings.TrimSuffix(ref.Words, ".") + ". "
	if err == nil && op.State == snapshots.OpDone {
		words += fmt.Sprintf("boxsnap deleted ‘%s’ (%s), the snapshot it took for the fork.", name, id)
	} else {
		words += fmt.Sprintf("‘%s’ (%s), the snapshot it took for the fork, could not be deleted: delete it with box_snapshot_delete.", name, id)
	}
	return &snapshots.Refusal{Code: ref.Code, TryAgain: ref.TryAgain, Words: words}
}

// tookForFork is the snapshot a fork of the box now was taken from: its
// ID, its name, and what its take said.
type tookForFork struct{ id, name, words string }

// forkCapture asks the fork seam for the snapshot a fork of the box now
// starts from, once for one fork or for many (the seam checks the fork
// first: its plan, room for every copy, the names), and waits for it. It
// answers false when it has answered the call itself: a refusal, a take
// that ended badly, or one still running.
func (s operations) forkCapture(w http.ResponseWriter, r *http.Request, p toolparams.ForkToolParams) (tookForFork, bool) {
	ctx, c := r.Context(), caller(r)
	op, err := s.Forks.CaptureNow(ctx, c, fork.NowRequest{Box: p.Box, Name: p.Name, Count: p.Forks(), RequestID: p.Request})
	if err != nil {
		s.fail(w, r, err)
		return tookForFork{}, false
	}
	if op, err = s.waitOp(ctx, c, op.ID); err != nil {
		s.fail(w, r, err)
		return tookForFork{}, false
	}
	if s.endedBadly(w, r, op) {
		return tookForFork{}, false
	}
	if op.State != snapshots.OpDone {
		writeJSON(w, http.StatusAccepted, wire.OperationAnswer{Operation: op, Message: runningWords(op)})
		return tookForFork{}, false
	}
	res, err := s.Take.Kinds().Take.Result(op)
	if err != nil {
		s.fail(w, r, err)
		return tookForFork{}, false
	}
	return tookForFork{id: res.Snapshot, name: res.Name, words: answers.TakeWords(s.BoxName(ctx, c, op), res, s.PriceOf(ctx, c, res.Snapshot))}, true
}
