package api

import (
	"context"
	"net/http"

	"github.com/boxsnap/boxsnap/app/api/answers"
	"github.com/boxsnap/boxsnap/app/api/toolparams"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/fork"
	"github.com/boxsnap/boxsnap/app/wire"
)

// tool is box_fork with count: one snapshot (the one named, or one
// taken now, once for all of them) and count forks of it, each its own
// operation and box, waited for together. It answers each fork's end: one
// that failed is listed with why, and the others stand.
func (s forkMany) tool(w http.ResponseWriter, r *http.Request, p toolparams.ForkToolParams) {
	ctx, c := r.Context(), caller(r)
	ref, took, tookName, tookWords := p.Snapshot, "", "", ""
	if ref == "" {
		tk, ok := s.forkCapture(w, r, p)
		if !ok {
			return
		}
		ref, took, tookName, tookWords = tk.id, tk.id, tk.name, tk.words
	}
	ops, err := s.forks.ForkMany(ctx, c, fork.ForkManyRequest{Box: p.Box, Snapshot: ref, Name: p.Name, Count: *p.Count, RequestID: p.Request})
	if err != nil {
		if took != "" {
			err = s.undoForkTake(ctx, c, took, tookName, err)
		}
		s.fail(w, r, err)
		return
	}
	ans := s.answer(ctx, c, ops, true)
	ans.Took = tookWords
	if tookWords != "" {
		ans.Message = tookWords + " " + ans.Message
	}
	writeJSON(w, http.StatusOK, ans)
}

// answer says each fork of ops as it is, after waiting (with wait)
// at most ToolWait for all of them together.
func (s forkMany) answer(ctx context.Context, c snapshots.Caller, ops []*snapshots.Operation, wait bool) wire.ForkManyAnswer {
	ans := wire.ForkManyAnswer{Forks: make([]wire.ForkOne, 0, len(ops))}
	wctx, cancel := context.WithTimeout(ctx, ToolWait)
	defer cancel()
	var made, others []string
	from := ""
	for _, op := range ops {
		if wait {
			_, _ = s.core.Wait(wctx, op.ID) // one still running when the wait ends is said running
		}
		if now, err := s.core.Operation(context.WithoutCancel(ctx), c, op.ID); err == nil {
			op = now
		}
		if ans.Forked == "" && op.Target != nil {
			ans.Forked = *op.Target
		}
		one := wire.ForkOne{Operation: op.ID, State: string(op.State)}
		if p, err := s.forks.Kinds().Fork.Params(op); err == nil {
			one.Name = p.Name
		}
		switch op.State {
		case snapshots.OpDone:
			if res, err := s.forks.Kinds().Fork.Result(op); err == nil {
				one.Box, one.Message, from = res.Box, answers.ForkWords(res), res.From
				made = append(made, res.Name)
			}
		case snapshots.OpFailed:
			why, observed := "", ""
			if op.Error != nil {
				why = *op.Error
			}
			if op.Observed != nil {
				observed = *op.Observed
			}
			one.Message = snapshots.UnfinishedWords("The fork", why, observed)
		case snapshots.OpUnknown:
			one.Message = snapshots.UnknownWords(s.BoxName(ctx, c, op), op) + " Check now: POST /api/v1/operations/" + op.ID + "/check."
		default:
			one.Message = runningWords(op)
		}
		if op.State != snapshots.OpDone {
			others = append(others, one.Name+": "+one.Message)
		}
		ans.Forks = append(ans.Forks, one)
	}
	ans.Message = answers.ForkManyWords(len(ops), made, from, others)
	return ans
}

// rest is POST .../fork with count: count forks of the one
// snapshot, answered at once, or with wait once they all end (or the wait
// does).
func (s forkMany) rest(w http.ResponseWriter, r *http.Request, box, ref string, body wire.ForkBody, wait bool) {
	ctx, c := r.Context(), caller(r)
	ops, err := s.forks.ForkMany(ctx, c, fork.ForkManyRequest{Box: box, Snapshot: ref, Name: body.Name, Count: *body.Count,
		AsMachine: body.AsMachine, RequestID: body.Request})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	ans := s.answer(ctx, c, ops, wait)
	status := http.StatusOK
	for _, f := range ans.Forks {
		if f.State != string(snapshots.OpDone) && f.State != string(snapshots.OpFailed) {
			status = http.StatusAccepted
		}
	}
	writeJSON(w, status, ans)
}
