package restore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/boxsnap/boxsnap/app/operations"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/store"
	"github.com/boxsnap/boxsnap/providers"
)

// Asker records an agent's restore as a request for the person's word and
// answers the error that says it asked; the restore calls it where an
// agent must ask first. The approvals seam is one (UseApprovals).
type Asker interface {
	AskRestore(ctx context.Context, c snapshots.Caller, b *snapshots.Box, sn *snapshots.Snapshot, execution bool, settings snapshots.Settings) error
}

// UseApprovals gives the restore the seam an agent's restore asks the
// person through; without one, such a restore fails rather than run
// without the person's word.
func (s *Restores) UseApprovals(a Asker) { s.asker = a }

// The box's states a finished restore answers (RestoreResult.BoxState), as
// its backend reads them then.
const (
	BoxRunning = "running"
	BoxStopped = "stopped"
)

// restoreParams are a restore's parameters on its operation, fixed at
// admission so a resumed restore follows the same order.
type restoreParams struct {
	NoUndo bool                    `json:"noUndo"`
	Force  bool                    `json:"force"`
	Order  []providers.RestoreStep `json:"order"`
	Guard  []string                `json:"guard,omitempty"`
	Undo   providers.UndoKind      `json:"undo"`
}

// RestoreResult is what a finished restore answers (what it replaced, the
// undo's name, whether processes ended, size changes, the box's state).
type RestoreResult struct {
	Target     string             `json:"snapshot"`
	TargetName string             `json:"name"`
	Undo       string             `json:"undo,omitempty"`
	UndoName   string             `json:"undoName,omitempty"`
	Size       *providers.BoxSize `json:"size,omitempty"`
	Processes  bool               `json:"processesEnded"`
	BoxState   string             `json:"boxState"`
	Replaced   []string           `json:"replacedUndos,omitempty"`
}

// Guard lists what a restore of b would lose beyond its disk: threads with a
// workspace on it, the desktop's control, open terminals. An agent's own
// workspace on its own box is left out for it.
func (s *Restores) Guard(ctx context.Context, c snapshots.Caller, b *snapshots.Box) []string {
	var out []string
	for _, w := range b.Presence.Workspaces {
		if c.Kind == snapshots.CallerAgent && w.Thread == c.Thread && !w.RunsOn {
			continue
		}
		title := s.k.ThreadTitle(ctx, &w.Thread)
		if title == "" {
			title = w.Thread
		}
		doing := "idle"
		if w.Working {
			doing = "working"
		}
		// The dialog's words: the first says what goes, the others "the
		// same".
		what := "its worktree, uncommitted files and session there go."
		if len(out) > 0 {
			what = "the same."
		}
		out = append(out, fmt.Sprintf("%s is %s on %s: %s", title, doing, b.Name, what))
	}
	if b.Presence.Desktop != "" {
		who := "You have"
		if b.Presence.Desktop != "you" && b.Presence.Desktop != "the person" {
			who = b.Presence.Desktop + " has"
		}
		out = append(out, who+" control of its desktop.")
	}
	switch n := b.Presence.Terminals; {
	case n == 1:
		out = append(out, "A terminal is open on it.")
	case n > 1:
		out = append(out, fmt.Sprintf("%d terminals are open on it.", n))
	}
	return out
}

// ThreadsRunOn reports whether, for a restore by c, threads run on b: for the
// person, any thread with a workspace on it, working or idle ("Restore
// anyway" passes only the desktop and terminals); for an agent, a thread that
// runs on it (the rest is the guard's).
func ThreadsRunOn(c snapshots.Caller, b *snapshots.Box) bool {
	for _, w := range b.Presence.Workspaces {
		if w.RunsOn || c.IsPerson() {
			return true
		}
	}
	return false
}

// executionMachineWords names the threads that run on a box, for the refusal
// of its restore by c (these are off unless Settings turns them on).
func (s *Restores) executionMachineWords(ctx context.Context, c snapshots.Caller, b *snapshots.Box) string {
	var names []string
	for _, w := range b.Presence.Workspaces {
		if w.RunsOn || c.IsPerson() {
			t := s.k.ThreadTitle(ctx, &w.Thread)
			if t == "" {
				t = w.Thread
			}
			names = append(names, t)
		}
	}
	return executionMachineRefusalWords(names, b.Name)
}

// Restore admits a restore: plan, guard, pin and record, admit the undo, all
// before anything stops.
func (s *Restores) Restore(ctx context.Context, c snapshots.Caller, req snapshots.RestoreRequest) (*snapshots.Operation, error) {
	if !req.DryRun {
		if op, err := s.k.Repeated(ctx, c, req.RequestID, snapshots.OpRestore, req.Box, req.Snapshot); err != nil || op != nil {
			return op, err
		}
	}
	sn, b, err := s.k.SnapshotOfBox(ctx, c, req.Box, req.Snapshot)
	if err != nil {
		return nil, err
	}
	if err := snapshots.MayAct(c, snapshots.ActRestore, b, sn); err != nil {
		return nil, err
	}
	if c.Kind == snapshots.CallerAgent {
		if !req.Replace {
			return nil, refusal(snapshots.CodeInvalid, snapshots.ReplaceTrueWords(b.Name))
		}
		req.NoUndo, req.Force = false, false
	}
	if !req.DryRun {
		if op, err := s.k.ExistingRequest(ctx, s.st.Pool, c, req.RequestID, snapshots.OpRestore, &sn.ID); err != nil || op != nil {
			return op, err
		}
	}
	settings, err := s.k.Settings(ctx)
	if err != nil {
		return nil, err
	}
	execution, err := s.restoreMayBe(ctx, c, b, sn, req.NoUndo, settings)
	if err != nil {
		return nil, err
	}
	// An agent asks the person instead: on a box threads run on, and on its
	// own box when Settings turns "Agents may restore their own boxes" off.
	askFirst := c.Kind == snapshots.CallerAgent && req.Consent == nil && !req.DryRun && (execution || !settings.AgentsMayRestore)
	if sn.BoxID != b.ID {
		return nil, refusal(snapshots.CodePlan, otherBoxForkInsteadWords(sn.Name, sn.BoxName))
	}
	if sn.Guest == "earlier" {
		// Its guest is not the box's: only its own words say why (step 1).
		if err := snapshots.Eligible(sn, snapshots.ChangeRestore, nil, s.now(), s.k.TimeZone(ctx)); err != nil {
			return nil, err
		}
	}
	be, plan, err := s.restorePlan(ctx, b, sn)
	if err != nil {
		return nil, err
	}
	if askFirst {
		if s.asker == nil {
			return nil, errors.New("restore: no approvals seam to ask the person through")
		}
		return nil, s.asker.AskRestore(ctx, c, b, sn, execution, settings)
	}
	guard := s.Guard(ctx, c, b)
	if err := restoreGuarded(c, b, guard, req); err != nil {
		return nil, err
	}
	if sn.Guest == "held-copy" {
		// A swap: the current guest stays, as the box's earlier guest, in
		// place of an undo.
		req.NoUndo = true
	}
	if !req.NoUndo {
		if err := s.undoAdmits(ctx, c, b, be, plan, settings); err != nil {
			return nil, err
		}
	}
	if req.DryRun {
		return nil, s.restoreEligibleNow(ctx, b, sn, req.Snapshot)
	}
	return s.admitRestore(ctx, c, req, b, sn, be, plan, settings, guard)
}

// restoreOrder is the plan's capture order with the steps every restore has,
// in the usual order (undo, stop, restore, start, set straight) where the
// backend gave none.
func restoreOrder(plan providers.SnapshotPlan) []providers.RestoreStep {
	if len(plan.Restore.Order) > 0 {
		return plan.Restore.Order
	}
	return []providers.RestoreStep{providers.StepStop, providers.StepUndo, providers.StepRollback, providers.StepStart, providers.StepReadSize}
}

// UndoOnceStopped says whether a restore by plan takes its undo once the
// box is stopped (Proxmox, QEMU: nothing written before the restore is in
// neither) rather than first, while the box runs (local, Docker).
func UndoOnceStopped(plan providers.SnapshotPlan) bool {
	for _, step := range restoreOrder(plan) {
		switch step {
		case providers.StepUndo:
			return false
		case providers.StepStop:
			return true
		}
	}
	return true
}

// runRestore runs a restore's steps 5 to 10 in the backend's capture order,
// recording each before it runs, from the step it reached.
func (s *Restores) runRestore(ctx context.Context, op *snapshots.Operation, p restoreParams) (RestoreResult, error) {
	sn, err := s.k.SnapshotByID(ctx, s.st.Pool, snapshots.PinTarget(op))
	if err != nil {
		return RestoreResult{}, s.k.End(ctx, op, snapshots.OpFailed, failTargetGone, "")
	}
	b, err := s.k.BoxByID(ctx, s.st.Pool, sn.BoxID)
	if err != nil {
		return RestoreResult{}, err
	}
	be, err := s.k.Backend(b.BackendID)
	if err != nil {
		return RestoreResult{}, s.restoreFailed(ctx, op, b, sn, nil, "", err.Error(), observedNothingChanged)
	}
	r := newRestoreRun(op, p, sn, b, be, s.k.TimeZone(ctx))
	if !r.resuming {
		// Eligible again, now: a delete that began meanwhile refuses it.
		blocking, err := s.k.DeletingPins(ctx, s.st.Pool, sn.ID, op.ID)
		if err != nil {
			return RestoreResult{}, err
		}
		if err := snapshots.Eligible(sn, snapshots.ChangeRestore, blocking, s.now(), r.tz); err != nil {
			return RestoreResult{}, s.k.End(ctx, op, snapshots.OpFailed, failNothingChangedWords(err.Error()), "")
		}
	}
	start := restoreStart(op, p.Order)
	if err := s.restoreAskedBefore(ctx, r); err != nil {
		return RestoreResult{}, err
	}
	r.pictured = s.holdRestorePicture(ctx, r, start)
	for i := start; i < len(p.Order); i++ {
		if i > start {
			op.TaskEnded = nil // the task waited for was the first step's: the others snooze on their own
		}
		if stop, err := s.restoreStep(ctx, r, i); stop {
			return RestoreResult{}, err
		}
	}
	return s.restoreDone(ctx, r)
}

// restoreRun is one run of a restore's steps: what it read as it began,
// and what its steps have found so far.
type restoreRun struct {
	op       *snapshots.Operation
	p        restoreParams
	sn       *snapshots.Snapshot
	b        *snapshots.Box // the box, the swapped-in one after a swap's step
	be       snapshots.Backend
	ref      providers.SnapshotRef
	resuming bool
	caller   snapshots.Caller
	tz       *time.Location
	yes      string // the person's yes, for the box log, or ""
	// wasRunning is whether the box ran just before the restore stopped
	// it: read before the stop and recorded with the stop's step
	// (Operation.BoxRan), so a run resumed past the stop knows it too.
	// Where it could not be read, the box is taken to have run: it is
	// started again. memory is a target that holds the box's memory, whose
	// rollback may bring the box back running with its processes
	// (broughtBack, as the backend's rollback answers), not started again.
	// ended is whether a step ended the box's running processes, as the
	// backend's stop answers, or as the stop's record says for a run
	// resumed past it.
	wasRunning  bool
	memory      bool
	broughtBack bool
	ended       bool
	asked       bool // the box log says the restore was asked
	pictured    bool // the undo's picture is held with the operation
	size        *providers.BoxSize
}

// newRestoreRun begins a run of op's restore of sn on b.
func newRestoreRun(op *snapshots.Operation, p restoreParams, sn *snapshots.Snapshot, b *snapshots.Box, be snapshots.Backend, tz *time.Location) *restoreRun {
	r := &restoreRun{op: op, p: p, sn: sn, b: b, be: be, ref: snapshots.RefOf(sn, b), resuming: op.Resuming,
		caller: snapshots.CallerOf(op), tz: tz, wasRunning: true,
		memory: sn.Holds == string(providers.HoldsDiskAndMemory)}
	// A restore on the person's yes says so in the box log.
	if w := consentWords(op, tz); w != "" {
		r.yes = ", " + w
	}
	if op.BoxRan != nil {
		r.wasRunning = *op.BoxRan
		r.ended = *op.BoxRan
	}
	return r
}

// restoreStart gives the index in order of the step a run begins at,
// skipping the steps already done: each step is recorded before it runs, so
// the recorded one runs again, and the ones before it are done. When the
// job snoozed on the recorded step's own task, which ended OK, that step is
// done too: the run begins at the next, and op.TaskEnded is cleared.
func restoreStart(op *snapshots.Operation, order []providers.RestoreStep) int {
	start := 0
	for i, st := range order {
		if string(st) == op.Step {
			start = i
		}
	}
	if op.Step == snapshots.StepUndos {
		start = len(order)
	}
	if IsCopyStep(op.Step) {
		start = IndexOf(order, providers.StepUndo) // the held copy is the undo
	}
	if start < len(order) && string(order[start]) == op.Step && ProviderStep(order[start]) && snapshots.StepTaskDone(op) {
		// The job snoozed on this step's own task, which ended OK: the
		// step is done, and the restore goes on from the next, which snoozes
		// on its own (the swap's adoption reads a task ended OK as its own
		// clone's).
		start++
		op.TaskEnded = nil
	}
	return start
}

// restoreAskedBefore reads whether an earlier run of this restore said in
// the box log that it was asked, and says so now for a restore with no
// undo; r.asked is true when the box log says so.
func (s *Restores) restoreAskedBefore(ctx context.Context, r *restoreRun) error {
	if r.resuming {
		var err error
		if r.asked, err = LoggedBefore(ctx, s.st, r.op, r.b.ID, snapshots.EvRestoreAsked); err != nil {
			return err
		}
	}
	if r.p.NoUndo && !r.asked {
		s.k.Log(ctx, s.st.Pool, r.b.ID, snapshots.EvRestoreAsked, r.caller, logRestoreAskedWords(r.sn.Name, "", true, r.yes), r.sn.ID, r.op.ID, nil)
		r.asked = true
	}
	return nil
}

// holdRestorePicture captures the undo's picture as the restore starts,
// from before the stop, and holds it with the operation, kept once the undo
// is taken, however many snoozes come between. It says whether the undo
// has a picture.
func (s *Restores) holdRestorePicture(ctx context.Context, r *restoreRun, start int) bool {
	if r.p.NoUndo || s.pictures == nil || !s.pictures.Capturing() || !r.b.HasScreen {
		return false
	}
	settings, err := s.k.Settings(ctx)
	if err != nil || !settings.Pictures {
		return false
	}
	if start == 0 {
		s.pictures.HoldUndoPicture(ctx, r.op, r.b)
	}
	return true
}

// restoreStep records and runs step i of the restore's order. stop says
// the run ends here, with err (nil when the operation ended, failed or
// not); otherwise the run goes on to the next step.
func (s *Restores) restoreStep(ctx context.Context, r *restoreRun, i int) (stop bool, err error) {
	op, step := r.op, r.p.Order[i]
	// A held copy's step stays recorded as the undo resumes: its copy
	// goes on from it (TakeHeldUndo). The stop's step is recorded
	// with whether the box ran.
	switch {
	case step == providers.StepStop:
		if err := s.stopStep(ctx, op, r.be, r.b); err != nil {
			return true, err
		}
		if op.BoxRan != nil {
			r.wasRunning = *op.BoxRan
		}
	case !(step == providers.StepUndo && IsCopyStep(op.Step)):
		if err := s.k.Step(ctx, op, string(step)); err != nil {
			return true, err
		}
	}
	switch step {
	case providers.StepUndo:
		return s.restoreUndoStep(ctx, r, i)
	case providers.StepAccess:
		// The box set straight, its access first.
		if err := s.SetStraight(ctx, op.ID, r.b, r.be, "the restore"); err != nil {
			if ctx.Err() != nil {
				return true, ctx.Err()
			}
			return true, s.restoreFailedAt(ctx, op, r.b, r.sn, r.be, r.p.Order, i, err, r.wasRunning, err.Error())
		}
	case providers.StepAdopt, providers.StepEarlier:
		nb, err := s.swapStep(ctx, op, r.b, r.sn, r.be, step)
		if operations.Pending(err) {
			return true, err // the job snoozes on the adoption's clone; the swap resumes at its step
		}
		if err != nil {
			if ctx.Err() != nil {
				return true, ctx.Err()
			}
			return true, s.restoreFailedAt(ctx, op, r.b, r.sn, r.be, r.p.Order, i, err, r.wasRunning, err.Error())
		}
		r.b = nb
	default:
		return s.restoreBackendStep(ctx, r, i)
	}
	return false, nil
}

// restoreUndoStep takes the restore's undo, unless it has none, and says in
// the box log that the restore was asked, naming the undo. A failed undo
// brings the box back as it was before saying so; stop is as restoreStep's.
func (s *Restores) restoreUndoStep(ctx context.Context, r *restoreRun, i int) (stop bool, err error) {
	if r.p.NoUndo {
		return false, nil
	}
	op := r.op
	take := s.taker.TakeUndo
	if r.p.Undo == providers.UndoHeldCopy {
		take = s.taker.TakeHeldUndo // ZFS's order: a held copy of the stopped guest
	}
	undo, err := take(ctx, op, r.b, r.be, r.resuming)
	if operations.Pending(err) {
		return true, err // the job snoozes on the undo's task; the undo is found by its label after
	}
	if err == nil && r.pictured {
		s.pictures.KeepUndoPicture(ctx, op, undo)
	}
	if err != nil {
		if ctx.Err() != nil {
			return true, ctx.Err() // the worker stops: the restore resumes at its undo
		}
		// Bring the box back as it was before saying so.
		words := failUndoWords(snapshots.TaskFailedWords(op, err.Error()), "")
		return true, s.restoreFailedAt(ctx, op, r.b, r.sn, r.be, r.p.Order, i, nil, r.wasRunning, words)
	}
	if !r.asked {
		s.k.Log(ctx, s.st.Pool, r.b.ID, snapshots.EvRestoreAsked, r.caller, logRestoreAskedWords(r.sn.Name, undo.Name, false, r.yes), r.sn.ID, op.ID, nil)
		r.asked = true
	}
	return false, nil
}

// restoreBackendStep runs a step the backend does (stop, rollback, start,
// read the size), having said in the box log that the restore was asked;
// the size the backend read is kept in r.size. A start is skipped for a box
// a memory rollback brought back running, or one that did not run. stop is
// as restoreStep's.
func (s *Restores) restoreBackendStep(ctx context.Context, r *restoreRun, i int) (stop bool, err error) {
	op, b, step := r.op, r.b, r.p.Order[i]
	if !r.asked {
		s.k.Log(ctx, s.st.Pool, b.ID, snapshots.EvRestoreAsked, r.caller, logRestoreAskedWords(r.sn.Name, "", false, r.yes), r.sn.ID, op.ID, nil)
		r.asked = true
	}
	if step == providers.StepStart {
		// A memory rollback resumed the box: it is not started
		// again (a QEMU guest's start would fail, "already
		// running"). A box that did not run stays stopped.
		if r.broughtBack {
			return false, nil
		}
		if r.memory {
			if runs, err := s.guestRuns(ctx, r.be, b); err == nil && runs {
				r.broughtBack = true
				return false, nil
			}
		}
		if !r.wasRunning {
			return false, nil
		}
	}
	// Its provider task is waited for by the job's snooze: the
	// restore resumes here once the task ended (done: the next step;
	// failed: this step asked once more, waited for in place).
	prog, err := r.be.Snap.RestoreSnapshot(ctx, snapshots.GuestOf(b), r.ref, step, s.k.TaskRecorder(op))
	if operations.Pending(err) {
		return true, err
	}
	if err != nil {
		if ctx.Err() != nil {
			return true, ctx.Err() // the worker stops: the restore resumes from this step
		}
		if errors.Is(err, providers.ErrUnreachable) {
			return true, s.k.End(ctx, op, snapshots.OpUnknown, err.Error(), observedNoAnswerWords(snapshots.HostWords(b, r.be), string(step)))
		}
		return true, s.restoreFailedAt(ctx, op, b, r.sn, r.be, r.p.Order, i, err, r.wasRunning, snapshots.TaskFailedWords(op, err.Error()))
	}
	if prog.Size != nil {
		r.size = prog.Size
	}
	r.ended = r.ended || prog.Ended
	r.broughtBack = r.broughtBack || prog.Resumed
	return false, nil
}

// restoreDone ends a restore whose steps all ran: older undos go once this
// one is ready, never this restore's target or its own undo; a swapped-in
// held copy's template goes; the head moves back to the target, the box
// Log says the box is restored, and it answers the restore's result, which
// the runner returns and the engine records as the operation ends.
func (s *Restores) restoreDone(ctx context.Context, r *restoreRun) (RestoreResult, error) {
	op, b, sn, be := r.op, r.b, r.sn, r.be
	if err := s.k.Step(ctx, op, snapshots.StepUndos); err != nil {
		return RestoreResult{}, err
	}
	op2, _ := s.ops.ByID(ctx, s.st.Pool, op.ID)
	if op2 != nil {
		op.UndoID = op2.UndoID
	}
	replaced, err := s.replaceUndos(ctx, op, b, be, sn.ID)
	if err != nil {
		return RestoreResult{}, err // the job snoozes on the backend's delete, and resumes here
	}
	if sn.Guest == "held-copy" && b.GuestRef != "" {
		// The copy is the box's guest now: its template goes. Its delete's
		// task is waited for by the job's snooze: the restore resumes at its
		// undos' step, and the copy still deleting is deleted again (gone
		// already: its record goes).
		if err := s.del.DeleteStep(ctx, op, sn, b, be, snapshots.System("a swap made it the box's guest"), "its copy is the box's guest now"); err != nil {
			if operations.Pending(err) {
				return RestoreResult{}, err
			}
			s.logger.Warn("delete a swapped-in held copy", "snapshot", sn.ID, "err", err)
		}
	}
	res := RestoreResult{Target: sn.ID, TargetName: sn.Name, Size: r.size, Replaced: replaced,
		Processes: r.ended && !r.broughtBack, BoxState: s.restoredState(ctx, be, b, r.wasRunning || r.broughtBack)}
	if op.UndoID != nil {
		if u, err := s.k.SnapshotByID(ctx, s.st.Pool, *op.UndoID); err == nil {
			res.Undo, res.UndoName = u.ID, u.Name
		}
	}
	words := logRestoredWords(sn.Name, sn.TakenAt, r.yes, r.size, r.tz) + logRestoredHowWords(r.broughtBack, res.Processes, res.BoxState)
	s.k.SetHead(ctx, s.st.Pool, b.ID, sn.ID) // the head moves back only here
	s.k.Log(ctx, s.st.Pool, b.ID, snapshots.EvRestored, r.caller, words, sn.ID, op.ID, res)
	return res, nil
}

// stopStep records a restore's stop step, before the stop, with whether the
// box runs then (Operation.BoxRan). A run resumed at its stop keeps what the
// first run recorded: the stop may have ended the box already.
func (s *Restores) stopStep(ctx context.Context, op *snapshots.Operation, be snapshots.Backend, b *snapshots.Box) error {
	if op.Step == string(providers.StepStop) {
		return nil // recorded by the run the restore resumes
	}
	runs, err := s.guestRuns(ctx, be, b)
	if err != nil {
		s.logger.Warn("read whether a box runs before a restore stops it; it will be started again", "box", b.Name, "err", err)
		return s.k.Step(ctx, op, string(providers.StepStop))
	}
	return s.ops.StepBoxRan(ctx, op, string(providers.StepStop), runs)
}

// restoredState is the box's state a restore answers, as its backend reads
// it once the restore is done: "running" or "stopped"; expected where it
// cannot be read.
func (s *Restores) restoredState(ctx context.Context, be snapshots.Backend, b *snapshots.Box, expected bool) string {
	runs, err := s.guestRuns(ctx, be, b)
	if err != nil {
		runs = expected
	}
	if runs {
		return BoxRunning
	}
	return BoxStopped
}

// restoreFailedAt ends a restore whose step order[i] failed (stepErr; nil for
// the core's own undo), leaving the box as it found it where it can and
// saying exactly how it left it: a rollback the backend did not refuse
// outright may have changed part of the files, which the undo puts back; a
// box the restore stopped, or may have, is started again if it was running
// before. Its undo replaces the oldest (restoreFailed).
func (s *Restores) restoreFailedAt(ctx context.Context, op *snapshots.Operation, b *snapshots.Box, sn *snapshots.Snapshot, be snapshots.Backend, order []providers.RestoreStep, i int, stepErr error, wasRunning bool, words string) error {
	step := order[i]
	// done: a step of the order ran before order[i] (a swap's order has no
	// rollback).
	done := func(st providers.RestoreStep) bool { return slices.Contains(order[:i], st) }
	rec := s.ops.Recorder(op)
	files := observedFilesAsTheyWere
	switch {
	case step == providers.StepRollback && !errors.Is(stepErr, providers.ErrRefused):
		files = s.putBackFromUndo(ctx, op, b, be, rec)
	case done(providers.StepRollback):
		files = observedFilesRestored
		if step == providers.StepAccess {
			files = observedFilesRestoredAccess
		}
		s.k.SetHead(ctx, s.st.Pool, b.ID, sn.ID) // its files are the target's
	}
	box := ""
	switch {
	case step == providers.StepStart:
		box = observedStartFailedWords(stepErr.Error())
	case (step == providers.StepStop || done(providers.StepStop)) && !done(providers.StepStart):
		box = s.startAgain(ctx, be, b, snapshots.RefOf(sn, b), wasRunning, rec)
	case done(providers.StepStart):
		box = observedBoxRuns
	}
	observed := observedNothingChanged
	if files != observedFilesAsTheyWere || box != "" {
		observed = observedRestoreWords(files, box)
	}
	return s.restoreFailed(ctx, op, b, sn, &be, string(step), words, observed)
}

// putBackFromUndo rolls the box's files back to the restore's undo after a
// rollback that failed part way, and says what the files are then.
func (s *Restores) putBackFromUndo(ctx context.Context, op *snapshots.Operation, b *snapshots.Box, be snapshots.Backend, rec providers.Recorder) string {
	s.undoOfRun(ctx, op)
	if op.UndoID == nil {
		return observedFilesPartWayWords(observedNoUndo)
	}
	u, err := s.k.SnapshotByID(ctx, s.st.Pool, *op.UndoID)
	if err != nil || u.State != snapshots.StateReady {
		return observedFilesPartWayWords(observedUndoNotReady)
	}
	if _, err := be.Snap.RestoreSnapshot(ctx, snapshots.GuestOf(b), snapshots.RefOf(u, b), providers.StepRollback, rec); err != nil {
		return observedFilesPartWayWords(err.Error())
	}
	return observedFilesPutBack
}

// startAgain starts a box a failed restore stopped, or may have, if it was
// running before, and says whether it runs.
func (s *Restores) startAgain(ctx context.Context, be snapshots.Backend, b *snapshots.Box, ref providers.SnapshotRef, wasRunning bool, rec providers.Recorder) string {
	if runs, err := s.guestRuns(ctx, be, b); err == nil && runs {
		return observedBoxRuns
	}
	if !wasRunning {
		return observedBoxStoppedAsBefore
	}
	if _, err := be.Snap.RestoreSnapshot(ctx, snapshots.GuestOf(b), ref, providers.StepStart, rec); err != nil {
		return observedStartFailedWords(err.Error())
	}
	return observedBoxStartedAgain
}

// guestRuns says whether the box's guest runs now: the backend's own cheap
// read where it has one (providers.RunsReader), else its status.
func (s *Restores) guestRuns(ctx context.Context, be snapshots.Backend, b *snapshots.Box) (bool, error) {
	if r, ok := be.Snap.(providers.RunsReader); ok {
		return r.Runs(ctx, snapshots.GuestOf(b))
	}
	if be.Boxes == nil {
		return false, errors.New("the backend cannot say whether the box runs")
	}
	st, err := be.Boxes.Status(ctx, snapshots.GuestOf(b))
	return st.Running, err
}

// undoOfRun reads the restore's undo from its record when this run has not
// seen it (an undo taken before a restart).
func (s *Restores) undoOfRun(ctx context.Context, op *snapshots.Operation) {
	if op.UndoID != nil {
		return
	}
	if o, err := s.ops.ByID(ctx, s.st.Pool, op.ID); err == nil {
		op.UndoID = o.UndoID
	}
}

// restoreFailed ends a restore as failed, with what boxsnap observed of the
// box. Its undo, once ready, replaces the oldest as a successful restore's
// does (at most 2 a box, whatever the outcome), the backend's deletes waited
// for here, as a failed restore's step never resumes. be is nil when the
// box's backend is not known.
func (s *Restores) restoreFailed(ctx context.Context, op *snapshots.Operation, b *snapshots.Box, sn *snapshots.Snapshot, be *snapshots.Backend, step, words, observed string) error {
	if be != nil {
		s.undoOfRun(ctx, op)
		if op.UndoID != nil {
			if u, err := s.k.SnapshotByID(ctx, s.st.Pool, *op.UndoID); err == nil && u.State == snapshots.StateReady {
				if _, err := s.replaceUndosWith(ctx, op, b, *be, sn.ID, s.ops.Recorder(op)); err != nil {
					s.logger.Warn("replace the undos of a failed restore", "operation", op.ID, "err", err)
				}
			}
		}
	}
	s.k.Log(ctx, s.st.Pool, b.ID, snapshots.EvRestoreFailed, snapshots.CallerOf(op), snapshots.LogRestoreFailedWords(sn.Name, step, words, observed), sn.ID, op.ID, nil)
	return s.k.End(ctx, op, snapshots.OpFailed, words, observed)
}

// replaceUndos deletes the oldest undos that may go while the box holds more
// than its 2, never target or this restore's own undo. It answers their
// names, and operations.ErrTaskPending when a delete's task is left to the
// job's snooze: the step, resumed, finishes that delete first.
func (s *Restores) replaceUndos(ctx context.Context, op *snapshots.Operation, b *snapshots.Box, be snapshots.Backend, target string) ([]string, error) {
	return s.replaceUndosWith(ctx, op, b, be, target, nil)
}

// replaceUndosWith is replaceUndos with the backend's delete tasks waited for
// with rec, in place of the job's snooze (rec nil), for a restore that ends
// failed: its step never resumes, so it leaves the deletes an earlier run
// began to a later restore's.
func (s *Restores) replaceUndosWith(ctx context.Context, op *snapshots.Operation, b *snapshots.Box, be snapshots.Backend, target string, rec providers.Recorder) ([]string, error) {
	all, err := s.k.SnapshotsOfBox(ctx, s.st.Pool, b.ID)
	if err != nil {
		return nil, nil
	}
	var finished []string
	if rec == nil {
		// An undo this step began to delete before a restart or a snooze goes
		// first; not the target, a swapped-in held copy that the restore deletes
		// after this (its copy is the box's guest now).
		older := func(sn *snapshots.Snapshot) bool { return sn.IsUndo() && sn.ID != target }
		finished, err = s.del.FinishLeftDeletes(ctx, op, b, be, all, older, snapshots.System("a newer undo replaced it"), "a newer undo replaced it")
		if err != nil {
			return nil, err
		}
	}
	var undos []*snapshots.Snapshot
	for _, sn := range all {
		if sn.IsUndo() && sn.State != snapshots.StateFailed && sn.State != snapshots.StateDeleting {
			undos = append(undos, sn)
		}
	}
	tz := s.k.TimeZone(ctx)
	var gone []string
	// Oldest first: snapshotsOfBox lists newest first.
	for i := len(undos) - 1; i >= 0 && len(undos)-len(gone) > snapshots.UndosPerBox; i-- {
		u := undos[i]
		if u.ID == target || (op.UndoID != nil && u.ID == *op.UndoID) {
			continue
		}
		pins, err := s.k.Pins(ctx, s.st.Pool, u.ID, op.ID)
		if err != nil || snapshots.Eligible(u, snapshots.ChangeReplaceUndo, pins, s.now(), tz) != nil {
			continue
		}
		del := s.del.DeleteStep
		if rec != nil {
			del = func(ctx context.Context, op *snapshots.Operation, sn *snapshots.Snapshot, b *snapshots.Box, be snapshots.Backend, c snapshots.Caller, why string) error {
				return s.del.DeleteWith(ctx, op, sn, b, be, c, why, rec)
			}
		}
		if err := del(ctx, op, u, b, be, snapshots.System("a newer undo replaced it"), "a newer undo replaced it"); err != nil {
			if operations.Pending(err) {
				return nil, err
			}
			s.logger.Warn("replace an undo", "snapshot", u.ID, "err", err)
			continue
		}
		gone = append(gone, u.Name)
	}
	return append(finished, gone...), nil
}

// undoRoomWords says a refusal for the undo's room: the person is told they
// can untick the undo instead.
func undoRoomWords(c snapshots.Caller, err error) error {
	r, ok := snapshots.AsRefusal(err)
	if !ok {
		return err
	}
	words := noRoomForUndoWords(r.Words)
	if c.IsPerson() {
		words = orUntickUndoWords(words)
	}
	return &snapshots.Refusal{Code: r.Code, TryAgain: r.TryAgain, Words: words}
}

// undoPriceWords says a refusal for the undo's price: the ceiling's own
// words, and for the person that they can untick the undo instead, except on
// a box threads run on, never restored without one.
func undoPriceWords(c snapshots.Caller, err error) error {
	r, ok := snapshots.AsRefusal(err)
	if !ok || !c.IsPerson() {
		return err
	}
	return &snapshots.Refusal{Code: r.Code, TryAgain: r.TryAgain, Words: orUntickUndoWords(r.Words)}
}

// restoreMayBe checks that c may restore sn on b at all, with settings:
// an agent restores a snapshot that holds memory only when Settings lets
// agents, a box threads run on is restored only when Settings lets it and
// always with an undo. execution says threads run on the box.
func (s *Restores) restoreMayBe(ctx context.Context, c snapshots.Caller, b *snapshots.Box, sn *snapshots.Snapshot, noUndo bool, settings snapshots.Settings) (execution bool, err error) {
	if c.Kind == snapshots.CallerAgent && sn.Holds == string(providers.HoldsDiskAndMemory) && !settings.AgentsMayRestoreMemory {
		// Refused, not asked for: the form's two cases are not this one.
		return false, refusal(snapshots.CodeForbidden, onlyPersonRestoresMemoryWords)
	}
	execution = ThreadsRunOn(c, b)
	if execution && !settings.ExecutionMachineRestores {
		return false, refusal(snapshots.CodeGuard, s.executionMachineWords(ctx, c, b))
	}
	if execution && noUndo {
		return false, refusal(snapshots.CodePlan, snapshots.AlwaysWithUndoWords(b.Name))
	}
	return execution, nil
}

// restorePlan reads the plan for a restore of sn on b from its backend,
// refusing a box the backend has locked, or one it cannot restore sn on.
func (s *Restores) restorePlan(ctx context.Context, b *snapshots.Box, sn *snapshots.Snapshot) (snapshots.Backend, providers.SnapshotPlan, error) {
	be, err := s.k.Backend(b.BackendID)
	if err != nil {
		return snapshots.Backend{}, providers.SnapshotPlan{}, err
	}
	ref := snapshots.RefOf(sn, b)
	plan, err := s.k.PlanNow(ctx, b, be, &ref)
	if err != nil {
		return snapshots.Backend{}, providers.SnapshotPlan{}, s.k.PlanError(b, be, err)
	}
	if plan.Locked != nil {
		return snapshots.Backend{}, providers.SnapshotPlan{}, &snapshots.Refusal{Code: snapshots.CodeLocked, TryAgain: plan.Locked.Lock == "backup",
			Words: snapshots.LockedWords(be.Label, b.Name, plan.Locked.Lock, plan.Locked.Fix)}
	}
	if plan.Restore.Way == providers.WayNone || plan.Restore.Why != "" {
		why := plan.Restore.Why
		if why == "" {
			why = snapshots.CannotBeRestoredOnWords(b.Name, be.Label)
		}
		return snapshots.Backend{}, providers.SnapshotPlan{}, &snapshots.Refusal{Code: snapshots.CodePlan, Words: why, TryAgain: plan.Restore.TryAgain}
	}
	return be, plan, nil
}

// restoreGuarded refuses a restore of b that guard's words stand against:
// unless it was consented to, an agent's always, a person's unless forced.
func restoreGuarded(c snapshots.Caller, b *snapshots.Box, guard []string, req snapshots.RestoreRequest) error {
	if len(guard) > 0 && req.Consent == nil && (c.Kind == snapshots.CallerAgent || !req.Force) {
		w := strings.Join(guard, " ")
		if c.Kind == snapshots.CallerAgent {
			return &snapshots.Refusal{Code: snapshots.CodeGuard, TryAgain: true,
				Words: guardNowWords(b.Name, "restored", w)}
		}
		return &snapshots.Refusal{Code: snapshots.CodeGuard,
			Words: restoreGuardWords(b.Name, w)}
	}
	return nil
}

// undoAdmits checks, before anything stops, that the restore's undo can be
// taken: the backend takes one, the room holds it, and its price is within
// the ceiling.
func (s *Restores) undoAdmits(ctx context.Context, c snapshots.Caller, b *snapshots.Box, be snapshots.Backend, plan providers.SnapshotPlan, settings snapshots.Settings) error {
	if plan.Restore.Undo == providers.UndoNone {
		return refusal(snapshots.CodePlan, noUndoNotRestoredWords(b.Name, be.Label))
	}
	if err := s.k.RoomFor(ctx, c, b, be, plan, settings, plan.Restore.UndoBytes); err != nil {
		return undoRoomWords(c, err)
	}
	// Its price too, before anything stops.
	if err := s.k.CeilingAdmits(ctx, s.st.Pool, c, b.BackendID, snapshots.ChargeOfPlan(be.Snap.Snapshotting(b.Kind)), settings); err != nil {
		return undoPriceWords(c, err)
	}
	return nil
}

// admitRestore admits the restore in one transaction: sn still eligible on
// b, b ready and settled, the undo's price and room reserved before
// anything stops, and the operation recorded with its order and guard.
func (s *Restores) admitRestore(ctx context.Context, c snapshots.Caller, req snapshots.RestoreRequest, b *snapshots.Box, sn *snapshots.Snapshot, be snapshots.Backend, plan providers.SnapshotPlan, settings snapshots.Settings, guard []string) (*snapshots.Operation, error) {
	var op *snapshots.Operation
	err := store.InTx(ctx, s.st.Pool, func(tx pgx.Tx) error {
		if req.Along != nil {
			if err := req.Along(ctx, tx); err != nil {
				return err
			}
		}
		b, _, err := s.k.ChangeNow(ctx, tx, b.ID, sn.ID, req.Snapshot, snapshots.ChangeRestore)
		if err != nil {
			return err
		}
		if b.State != snapshots.BoxReady {
			return refusal(snapshots.CodeBusy, beingReleasedWords(b.Name))
		}
		if err := s.k.Unsettled(ctx, tx, b); err != nil {
			return err
		}
		// The undo's room is reserved before anything stops.
		var reserved *snapshots.Reserved
		if !req.NoUndo {
			if err := s.k.CeilingAdmits(ctx, tx, c, b.BackendID, snapshots.ChargeOfPlan(be.Snap.Snapshotting(b.Kind)), settings); err != nil {
				return undoPriceWords(c, err)
			}
			if reserved, err = s.k.ReserveRoom(ctx, tx, c, b, be, plan, settings, plan.Restore.UndoBytes); err != nil {
				return undoRoomWords(c, err)
			}
		}
		op, err = s.k.Admit(ctx, tx, snapshots.OpRequest{Kind: snapshots.OpRestore, Box: b, Target: sn, Pins: []string{sn.ID}, Caller: c,
			RequestID: req.RequestID, Consent: req.Consent, Params: restoreParams{NoUndo: req.NoUndo, Force: req.Force, Order: withAccess(restoreOrder(plan), be),
				Guard: guard, Undo: plan.Restore.Undo}, Reserved: reserved})
		if err != nil {
			return err
		}
		if !req.NoUndo {
			return s.k.ReservePrice(ctx, tx, op.ID, b.BackendID, be.Snap.Snapshotting(b.Kind))
		}
		return nil
	})
	return op, err
}

// restoreEligibleNow is the check a restore's admission makes in its
// transaction, read without locking: the box is ready, nothing is unsettled
// on it, and the snapshot may be restored now.
func (s *Restores) restoreEligibleNow(ctx context.Context, b *snapshots.Box, sn *snapshots.Snapshot, ref string) error {
	b2, err := s.k.BoxByID(ctx, s.st.Pool, b.ID)
	if err != nil {
		return snapshots.BoxNotFound(b.Name)
	}
	b = b2
	sn2, err := s.k.SnapshotByID(ctx, s.st.Pool, sn.ID)
	if err != nil {
		return snapshots.SnapshotNotFound(ref)
	}
	sn = sn2
	pins, err := s.k.DeletingPins(ctx, s.st.Pool, sn.ID, "")
	if err != nil {
		return err
	}
	if err := snapshots.Eligible(sn, snapshots.ChangeRestore, pins, s.now(), s.k.TimeZone(ctx)); err != nil {
		return err
	}
	if b.State != snapshots.BoxReady {
		return refusal(snapshots.CodeBusy, beingReleasedWords(b.Name))
	}
	return s.k.Unsettled(ctx, s.st.Pool, b)
}
