package api

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/boxsnap/boxsnap/app/wire"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/fork"
)

// forkSnapshot makes a new box from one of a box's snapshots.
func (s snapshotChanges) forkSnapshot(w http.ResponseWriter, r *http.Request) {
	box, ref := param(r, "box"), param(r, "snapshot")
	var body wire.ForkBody
	if err := decodeOptional(r, &body, "optionally name, asMachine, count and request"); err != nil {
		s.fail(w, r, err)
		return
	}
	wait, err := waitParam(r)
	if err == nil {
		err = checkBoxAndSnapshot(box, ref)
	}
	if err == nil {
		err = checkForkName(body.Name)
	}
	if err == nil {
		err = checkRequest(body.Request)
	}
	c := caller(r)
	if err == nil && !c.IsPerson() && body.AsMachine {
		err = &badRequest{code: snapshots.CodeForbidden,
			words: "Only the person forks as one of their machines: an agent's fork is its own thread's."}
	}
	if err == nil && body.Count != nil && *body.Count < 1 {
		err = invalid(forkCountRangeWords)
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if body.Count != nil {
		s.many.rest(w, r, box, ref, body, wait)
		return
	}
	op, err := s.forks.Fork(r.Context(), c, fork.ForkRequest{Box: box, Snapshot: ref, Name: body.Name,
		AsMachine: body.AsMachine, RequestID: body.Request})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.answerOperation(w, r, op, wait)
}

// checkFork says whether a snapshot can be forked, from its fork plan, and,
// with ?name=, whether that name is free. It changes nothing.
func (s snapshotChanges) checkFork(w http.ResponseWriter, r *http.Request) {
	box, ref := param(r, "box"), param(r, "snapshot")
	name := strings.TrimSpace(r.URL.Query().Get("name"))
	err := checkBoxAndSnapshot(box, ref)
	if err == nil {
		err = checkForkName(name)
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	ctx, c := r.Context(), caller(r)
	b, sn, plan, _, err := s.forks.Plan(ctx, c, box, ref)
	if err == nil {
		err = snapshots.MayAct(c, snapshots.ActFork, b, sn)
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	ans := wire.ForkCheckAnswer{OK: plan.Fork.OK, Snapshot: sn.ID, AboutMs: plan.Fork.About.Milliseconds(), Bytes: plan.Fork.Bytes}
	if !ans.OK {
		where := b.BackendID
		if be, ok := s.core.BackendOf(b); ok {
			where = be.Label
		}
		ans.Why = fork.PlanWhy(plan.Fork.Why, snapshots.CannotBeForkedWords(sn.Name, "on "+where))
	} else if err := fork.Room(plan, false, 1); err != nil {
		ans.OK, ans.Why = false, err.Error()
	} else if err := s.forks.NameFree(ctx, c, name); err != nil {
		ans.OK, ans.Why = false, err.Error()
	}
	if ans.OK {
		ans.Message = fmt.Sprintf("‘%s’ of %s can be forked: about %s", sn.Name, b.Name, snapshots.DurationWords(time.Duration(ans.AboutMs)*time.Millisecond))
		if ans.Bytes != nil {
			ans.Message += ", " + snapshots.GB(*ans.Bytes)
		}
		ans.Message += "."
	} else {
		ans.Message = fmt.Sprintf("‘%s’ of %s cannot be forked now: %s", sn.Name, b.Name, ans.Why)
	}
	writeJSON(w, http.StatusOK, ans)
}
