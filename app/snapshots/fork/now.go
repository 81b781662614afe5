package fork

import (
	"context"
	"strings"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/providers"
)

// TakeName is the name of the snapshot a fork of the box now is made
// from, "for a fork".
const TakeName = "for a fork"

// takeRequestPrefix prefixes the request ID of a fork of the box now's
// take, so a repeated fork is the same take and the same fork, and the
// take's ID never collides with the fork's.
const takeRequestPrefix = "take for fork" + keySeparator

// TakeRequestID is the request ID of the take a fork of the box now under
// requestID makes, or none.
func TakeRequestID(requestID string) string {
	if requestID == "" {
		return ""
	}
	return takeRequestPrefix + requestID
}

// NowRequest asks for forks of a box as it is now: Count of them (0 or 1
// is one), named as Fork and ForkMany name them.
type NowRequest struct {
	Box       string
	Name      string
	Count     int
	RequestID string
}

// CaptureNow checks a fork of the box now (CheckNow) and admits the take
// it starts from, named TakeName, once for one fork or many: every
// surface forks the box now through here. It answers the take's
// operation; the caller waits for it as for any take, then forks its
// snapshot with Fork or ForkMany.
func (s *Forks) CaptureNow(ctx context.Context, c snapshots.Caller, req NowRequest) (*snapshots.Operation, error) {
	if s.taker == nil {
		return nil, errNoTaker
	}
	if err := s.CheckNow(ctx, c, req); err != nil {
		return nil, err
	}
	return s.taker.TakeForFork(ctx, c, req.Box, TakeName, TakeRequestID(req.RequestID))
}

// CheckNow is the check before a fork of the box now takes, so a refused
// fork leaves no snapshot behind: the caller may fork the box, its plan
// allows a fork and a take, its storage has room for the take and every
// fork's copy, and the new names are free. The fork checks the plan and
// the names again when it is admitted.
func (s *Forks) CheckNow(ctx context.Context, c snapshots.Caller, req NowRequest) error {
	b, _, plan, err := s.k.Plan(ctx, c, req.Box, "")
	if b != nil {
		if err := s.notHereNow(ctx, b); err != nil {
			return err
		}
	}
	if err != nil {
		return err
	}
	if err := snapshots.MayAct(c, snapshots.ActFork, b, nil); err != nil {
		return err
	}
	if !plan.Fork.OK {
		return refusal(snapshots.CodePlan, PlanWhy(plan.Fork.Why, b.Name+" cannot be forked"))
	}
	if !plan.Take.OK {
		return &snapshots.Refusal{Code: snapshots.CodePlan, TryAgain: plan.Take.TryAgain,
			Words: PlanWhy(plan.Take.Why, b.Name+" cannot take the snapshot a fork starts from")}
	}
	count := max(req.Count, 1)
	if err := Room(plan, true, count); err != nil {
		return err
	}
	if count == 1 {
		return s.NameFree(ctx, c, req.Name)
	}
	if req.Count > s.maxCount {
		return refusal(snapshots.CodeInvalid, forkCountWords(req.Count, s.maxCount))
	}
	_, err = s.manyNames(ctx, c, b.Name, strings.TrimSpace(req.Name), count)
	return err
}

// Room refuses count forks the storage has no room for, from the plan:
// each fork's copy, or one copy for them all where forks share their
// snapshot's files, what each fork takes at once besides (its own disk
// image), and with take the snapshot taken first. A size the
// plan does not know refuses nothing: an unknown price is unknown, not
// zero.
func Room(plan providers.SnapshotPlan, take bool, count int) error {
	if plan.Fork.Bytes == nil {
		return nil
	}
	copies := int64(count)
	if plan.Fork.Shared {
		copies = 1
	}
	need := *plan.Fork.Bytes * copies
	if plan.Fork.EachBytes != nil {
		need += *plan.Fork.EachBytes * int64(count)
	}
	if take && plan.Take.AddsBytes != nil {
		need += *plan.Take.AddsBytes
	}
	if need <= plan.Storage.FreeBytes {
		return nil
	}
	where := plan.Storage.Name
	if where == "" {
		where = "The storage"
	}
	return &snapshots.Refusal{Code: snapshots.CodeRoom, TryAgain: true, Words: forkRoomWords(where, plan.Storage.FreeBytes, need, count, plan.Fork.Shared, plan.Fork.EachBytes != nil)}
}

// PlanWhy is a plan's own words, or fallback when it gives none, ending
// in one full stop: a fork's refusal, and the API's check of a fork.
func PlanWhy(why, fallback string) string {
	if why = strings.TrimSpace(why); why == "" {
		why = fallback
	}
	if !strings.HasSuffix(why, ".") {
		why += "."
	}
	return why
}
