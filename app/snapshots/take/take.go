package take

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/boxsnap/boxsnap/app/operations"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/store"
	"github.com/boxsnap/boxsnap/app/store/db"
	"github.com/boxsnap/boxsnap/providers"
)

// TakeRequest asks for a snapshot of a box.
type TakeRequest struct {
	Box       string
	Name      string
	Note      string
	Memory    bool
	RequestID string
}

// takeParams are a take's parameters on its operation.
type takeParams struct {
	Memory bool   `json:"memory"`
	Evict  string `json:"evict,omitempty"` // the agent's snapshot its sixth replaces, chosen at admission
}

// TakeResult is what a finished take answers.
type TakeResult struct {
	Snapshot string `json:"snapshot"`
	Name     string `json:"name"`
	Holds    string `json:"holds"`
	Excludes string `json:"excludes,omitempty"`
	Size     *int64 `json:"sizeBytes,omitempty"`
	TookMs   int64  `json:"tookMs"`
	PausedMs int64  `json:"pausedMs,omitempty"`
	Count    int    `json:"count"`
	Limit    int    `json:"limit"`
	Replaced string `json:"replaced,omitempty"`
}

// Take admits a take: it plans, checks the room and the limit, records the
// snapshot as taking and its operation, and queues the operation's job, all
// before anything changes on the backend. A repeated request ID returns the
// same operation (and its snapshot, nil if it was deleted since).
func (s *Take) Take(ctx context.Context, c snapshots.Caller, req TakeRequest) (*snapshots.Operation, *snapshots.Snapshot, error) {
	b, err := s.k.Box(ctx, c, req.Box)
	if err != nil {
		return nil, nil, err
	}
	if err := snapshots.MayAct(c, snapshots.ActTake, b, nil); err != nil {
		return nil, nil, err
	}
	if op, sn, err := s.repeatedTake(ctx, c, req.RequestID); err != nil || op != nil {
		return op, sn, err
	}
	a, err := s.takeChecks(ctx, c, b, req)
	if err != nil {
		return nil, nil, err
	}

	// The admission in four statements: its locks, the box's snapshots,
	// its records (the snapshot and its operation, with what the room and
	// the box's unconfirmed operations need), and the commit. What is
	// refused rolls back what was written.
	var op *snapshots.Operation
	var sn *snapshots.Snapshot
	err = store.InTx(ctx, s.st.Pool, func(tx pgx.Tx) error {
		b, err := s.lockForTake(ctx, tx, a, b.ID)
		if err != nil {
			return err
		}
		// The box's snapshots, read once under its lock, serve the limit
		// and the name. They are a statement of their own: read in
		// TakeAdmitLock's, they would be as that statement began, before
		// it got the box's row, and miss what an admission it waited for
		// committed meanwhile (READ COMMITTED refreshes only the rows a
		// statement locks, not the others it reads).
		all, err := s.k.SnapshotsOfBox(ctx, tx, b.ID)
		if err != nil {
			return err
		}
		evict, err := s.takeLimits(ctx, tx, a, b, all)
		if err != nil {
			return err
		}
		op, sn, err = s.recordTake(ctx, tx, a, b, all, evict)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	return op, sn, nil
}

// takeAdmission is what a take's admission checked before its
// transaction: the request, its caller, the box's backend and its plan.
type takeAdmission struct {
	req      TakeRequest
	c        snapshots.Caller
	be       snapshots.Backend
	snapping *providers.Snapshotting
	charge   snapshots.Charge
	tz       *time.Location
	now      time.Time
	name     string // the snapshot's name, before it is made unique
	note     *string
	settings snapshots.Settings
	plan     providers.SnapshotPlan
}

// repeatedTake gives the operation of a take already asked with requestID
// by c, and its snapshot (nil if it was deleted since); no operation when
// the request is new.
func (s *Take) repeatedTake(ctx context.Context, c snapshots.Caller, requestID string) (*snapshots.Operation, *snapshots.Snapshot, error) {
	op, err := s.k.ExistingRequest(ctx, s.st.Pool, c, requestID, snapshots.OpTake, nil)
	if err != nil || op == nil {
		return nil, nil, err
	}
	sn, err := s.k.SnapshotByID(ctx, s.st.Pool, snapshots.PinTarget(op))
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, nil, fmt.Errorf("read the snapshot of %s: %w", op.ID, err)
	}
	return op, sn, nil
}

// takeChecks checks a take of b before anything is written: the backend
// takes snapshots of the box (with its memory, if asked), the name and
// the note are clean, the plan is read and the take is allowed by it.
func (s *Take) takeChecks(ctx context.Context, c snapshots.Caller, b *snapshots.Box, req TakeRequest) (*takeAdmission, error) {
	be, err := s.k.Backend(b.BackendID)
	if err != nil {
		return nil, err
	}
	snapping := be.Snap.Snapshotting(b.Kind)
	if snapping == nil {
		return nil, refusal(snapshots.CodePlan, snapshots.NoSnapshotsWords(be.Label))
	}
	if req.Memory && !snapping.OffersMemory() {
		return nil, refusal(snapshots.CodeInvalid, diskOnlyWords(b.Name))
	}
	a := &takeAdmission{req: req, c: c, be: be, snapping: snapping, tz: s.k.TimeZone(ctx), now: s.now()}
	a.name = snapshots.DefaultName(a.now, a.tz)
	if strings.TrimSpace(req.Name) != "" {
		if a.name, err = snapshots.CleanName(req.Name); err != nil {
			return nil, err
		}
	}
	if a.note, err = snapshots.CleanNote(req.Note); err != nil {
		return nil, err
	}
	if a.settings, err = s.k.Settings(ctx); err != nil {
		return nil, err
	}
	if a.plan, err = s.k.PlanNow(ctx, b, be, nil); err != nil {
		return nil, s.k.PlanError(b, be, err)
	}
	if err := s.takeAllowed(ctx, c, b, be, a.plan, a.settings); err != nil {
		return nil, err
	}
	a.charge = snapshots.ChargeOfPlan(snapping)
	return a, nil
}

// lockForTake locks, in tx, the row of the box boxID, then the ceiling's lock (a paid
// backend's) and the storage's, held to the commit: every admission on the
// storage waits for it, and the room is read after the take's records. It
// gives the box as locked, refusing one that is not ready.
func (s *Take) lockForTake(ctx context.Context, tx pgx.Tx, a *takeAdmission, boxID string) (*snapshots.Box, error) {
	locked, err := s.st.TakeAdmitLock(ctx, tx, db.TakeAdmitLockParams{ID: boxID, Paid: a.charge.Paid, Storage: a.plan.Storage.Name})
	b, err := snapshots.BoxRow(locked.Box, err)
	if errors.Is(err, store.ErrNotFound) {
		return nil, snapshots.BoxNotFound(a.req.Box)
	} else if err != nil {
		return nil, fmt.Errorf("lock box: %w", err)
	}
	if b.State != snapshots.BoxReady {
		return nil, refusal(snapshots.CodeBusy, releasedTakesNoneWords(b.Name))
	}
	return b, nil
}

// takeLimits checks the box's limit, giving the snapshot the take evicts,
// if any, and the ceiling: refused when the rate held would be past it
// after this take. Their refusals come after the one of an operation that
// could not be confirmed, read for them alone.
func (s *Take) takeLimits(ctx context.Context, tx pgx.Tx, a *takeAdmission, b *snapshots.Box, all []*snapshots.Snapshot) (string, error) {
	evict, err := s.limitRoom(ctx, tx, a.c, b, all, a.settings.PerBox, a.tz)
	if err == nil {
		err = s.k.CeilingAdmits(ctx, tx, a.c, b.BackendID, a.charge, a.settings)
	}
	if err != nil {
		if uerr := s.k.Unsettled(ctx, tx, b); uerr != nil {
			return "", uerr
		}
		return "", err
	}
	return evict, nil
}

// recordTake records, in tx, the take's snapshot as taking, under a name
// unique among all, and its operation with its reservation, and checks the
// room against what the others on the storage reserve with it.
func (s *Take) recordTake(ctx context.Context, tx pgx.Tx, a *takeAdmission, b *snapshots.Box, all []*snapshots.Snapshot, evict string) (*snapshots.Operation, *snapshots.Snapshot, error) {
	c, req, plan, snapping := a.c, a.req, a.plan, a.snapping
	taken := make(map[string]bool, len(all))
	for _, sn := range all {
		taken[sn.Name] = true
	}
	name := snapshots.UniqueName(a.name, taken)
	owner, ownerThread := snapshots.OwnerOf(b)
	holds := string(providers.HoldsDisk)
	if req.Memory {
		holds = string(providers.HoldsDiskAndMemory)
	}
	var price []byte
	if snapping.Price != nil {
		var err error
		if price, err = json.Marshal(snapping.Price); err != nil {
			return nil, nil, fmt.Errorf("record price: %w", err)
		}
	}
	adds := plan.Take.AddsBytes
	if req.Memory && plan.Take.MemoryBytes != nil && adds != nil {
		// A memory snapshot's expected size is the box's memory too.
		sum := *adds + *plan.Take.MemoryBytes
		adds = &sum
	}
	// The operation is recorded with its reservation, and the room
	// checked against what the others on the storage reserve with it.
	reserved := snapshots.Reservation(b, plan, adds)
	id := snapshots.NewID(snapshots.PrefixSnapshot)
	var sn *snapshots.Snapshot
	var before int64
	var unsettled string
	op, err := s.ops.AdmitWith(ctx, tx, snapshots.OpRequest{Kind: snapshots.OpTake, Box: b, Pins: []string{id}, Caller: c, RequestID: req.RequestID,
		Params: takeParams{Memory: req.Memory, Evict: evict}, Reserved: reserved}.Request(), func(o db.OpInsertParams) (db.Operation, error) {
		r, err := s.st.TakeAdmit(ctx, tx, db.TakeAdmitParams{StorageKey: reserved.Storage, BoxID: b.ID, SnapshotID: id,
			BoxName: b.Name, BoxKind: b.Kind, BoxSystem: b.System, BoxThreadID: b.ThreadID, BackendID: b.BackendID,
			Host: b.Host, Storage: plan.Storage.Name, StorageType: plan.Storage.Type, GuestGeneration: b.Generation,
			Name: name, Note: a.note, TakenAt: a.now, SnapByKind: c.ByKind(), SnapByThreadID: threadOf(c), ByWhy: snapshots.NilIfEmpty(c.Why),
			Scope: string(snapping.Scope), Holds: holds, Excludes: snapshots.NilIfEmpty(snapping.Excludes), OwnerKind: owner,
			OwnerThreadID: ownerThread, State: snapshots.StateTaking, Picture: pictureState(b, a.settings), Price: price,
			OpID: o.ID, RequestKey: o.RequestKey, Kind: o.Kind, Generation: o.Generation, OpByKind: o.ByKind,
			OpByThreadID: o.ByThreadID, Consent: o.Consent, Params: o.Params, Reserved: o.Reserved})
		var pgErr *pgconn.PgError
		switch {
		case errors.As(err, &pgErr) && pgErr.Code == "23505" && pgErr.TableName == "snapshots":
			return db.Operation{}, refusal(snapshots.CodeConflict, snapshots.NameTakenWords)
		case err != nil:
			return db.Operation{}, fmt.Errorf("record the take: %w", err)
		}
		sn, _ = snapshots.SnapshotRow(r.Snapshot, nil)
		before, unsettled = r.ReservedBefore, r.Unsettled
		return r.Operation, nil
	})
	if err != nil {
		return nil, nil, err
	}
	if unsettled != "" {
		return nil, nil, s.k.Unsettled(ctx, tx, b)
	}
	total := before + reserved.Bytes
	if err := s.k.RoomFor(ctx, c, b, a.be, plan, a.settings, &total); err != nil {
		return nil, nil, err
	}
	return op, sn, nil
}

func pictureState(b *snapshots.Box, st snapshots.Settings) string {
	switch {
	case !b.HasScreen:
		return "none"
	case !st.Pictures:
		return "off"
	}
	return "none" // set to taken or failed once captured
}

// takeAllowed applies the plan and the room rule to a take.
func (s *Take) takeAllowed(ctx context.Context, c snapshots.Caller, b *snapshots.Box, be snapshots.Backend, plan providers.SnapshotPlan, st snapshots.Settings) error {
	if plan.Locked != nil {
		return &snapshots.Refusal{Code: snapshots.CodeLocked, TryAgain: plan.Locked.Lock == "backup",
			Words: snapshots.LockedWords(be.Label, b.Name, plan.Locked.Lock, plan.Locked.Fix)}
	}
	if !plan.Take.OK {
		return &snapshots.Refusal{Code: snapshots.CodePlan, Words: plan.Take.Why, TryAgain: plan.Take.TryAgain}
	}
	return s.k.RoomFor(ctx, c, b, be, plan, st, plan.Take.AddsBytes)
}

// limitRoom applies the per-box limit at admission: it returns the agent's
// snapshot a sixth will replace once it is ready, or refuses with what to
// delete. all is the box's snapshots, read under its lock.
func (s *Take) limitRoom(ctx context.Context, tx pgx.Tx, c snapshots.Caller, b *snapshots.Box, all []*snapshots.Snapshot, perBox int, tz *time.Location) (string, error) {
	count := snapshots.CountTowardLimit(all)
	if count < perBox {
		return "", nil
	}
	if c.Kind == snapshots.CallerAgent {
		// As many as bring the box back to the limit once the new one is
		// ready (more than one where it is already past it): else the
		// take is refused before the box goes further past it.
		first, tried := "", map[string]bool{}
		for range count + 1 - perBox {
			ev := s.evictableExcept(ctx, tx, c.Thread, all, tried, tz)
			if ev == nil {
				first = ""
				break
			}
			tried[ev.ID] = true
			if first == "" {
				first = ev.ID
			}
		}
		if first != "" {
			return first, nil
		}
	}
	var names []string
	hidden := 0
	for _, sn := range all {
		if sn.IsUndo() || sn.Automatic || sn.State == snapshots.StateFailed || sn.State == snapshots.StateDeleting {
			continue
		}
		if snapshots.MayAct(c, snapshots.ActSee, b, sn) == nil {
			names = append(names, "‘"+sn.Name+"’")
		} else {
			hidden++
		}
	}
	return "", refusal(snapshots.CodeLimit, perBoxLimitWords(b.Name, count, perBox, snapshots.DeleteWords(names, hidden)))
}

// evictable is the oldest snapshot an agent of thread took on the box that
// nobody kept and that eligible lets the limit delete now.
func (s *Take) evictable(ctx context.Context, q db.DBTX, thread string, all []*snapshots.Snapshot, except string, tz *time.Location) *snapshots.Snapshot {
	return s.evictableExcept(ctx, q, thread, all, map[string]bool{except: true}, tz)
}

// evictableExcept is evictable, passing over the snapshots in except.
func (s *Take) evictableExcept(ctx context.Context, q db.DBTX, thread string, all []*snapshots.Snapshot, except map[string]bool, tz *time.Location) *snapshots.Snapshot {
	var best *snapshots.Snapshot
	for _, sn := range all {
		if except[sn.ID] || sn.ByKind != "agent" || sn.ByThreadID == nil || *sn.ByThreadID != thread {
			continue
		}
		pins, err := s.k.Pins(ctx, q, sn.ID, "")
		if err != nil || snapshots.Eligible(sn, snapshots.ChangeEvictLimit, pins, s.now(), tz) != nil {
			continue
		}
		if best == nil || sn.TakenAt.Before(best.TakenAt) {
			best = sn
		}
	}
	return best
}

// takeBegun is what a take's start (TakeStart) read with it: its snapshot
// and its box, as they were once the run held the take.
type takeBegun struct {
	sn *snapshots.Snapshot
	b  *snapshots.Box
}

// startTake is the take's own start (operations.Start): the run's lock,
// its start, the step it runs first and its snapshot and box, in one
// statement. It answers nil for what it read when it cannot read them.
func (s *Take) startTake(ctx context.Context, conn operations.DB, id string) (db.Operation, *takeBegun, error) {
	r, err := s.st.TakeStart(ctx, conn, id)
	if err != nil {
		return db.Operation{}, nil, err
	}
	sn, _ := snapshots.SnapshotRow(r.Snapshot, nil)
	b, err := snapshots.BoxRow(r.Box, nil)
	if err != nil {
		return r.Operation, nil, nil // the runner reads them again, and says what it cannot read
	}
	return r.Operation, &takeBegun{sn: sn, b: b}, nil
}

// runTake runs a take from the step it reached, with what its start read
// (nil when the run began with the engine's start, or its start could not
// read them).
func (s *Take) runTake(ctx context.Context, op *snapshots.Operation, params takeParams, begun *takeBegun) (TakeResult, error) {
	resuming := op.Resuming
	// Its snapshot and its box, read by its start (TakeStart) or else in
	// one read here, each of which records the step it runs first while
	// the snapshot is taking (the picture's or the snapshot's); apart only
	// to say which is gone.
	var sn *snapshots.Snapshot
	var b *snapshots.Box
	var err error
	if begun != nil {
		sn, b = begun.sn, begun.b
	} else {
		var both db.TakeSnapshotToRunRow
		both, err = s.st.TakeSnapshotToRun(ctx, s.st.Pool, db.TakeSnapshotToRunParams{ID: snapshots.PinTarget(op), OperationID: op.ID, Resuming: resuming})
		if err == nil {
			sn, err = snapshots.SnapshotRow(both.Snapshot, nil)
		}
		if err == nil {
			b, err = snapshots.BoxRow(both.Box, nil)
		}
	}
	recorded := err == nil && sn.State == snapshots.StateTaking
	if err != nil {
		if sn, err = s.k.SnapshotByID(ctx, s.st.Pool, snapshots.PinTarget(op)); err != nil {
			return TakeResult{}, s.k.End(ctx, op, snapshots.OpFailed, failTakeSnapshotGone, "")
		}
		if b, err = s.k.BoxByID(ctx, s.st.Pool, sn.BoxID); err != nil {
			return TakeResult{}, s.k.End(ctx, op, snapshots.OpFailed, failTakeBoxGone, "")
		}
	}
	be, err := s.k.Backend(b.BackendID)
	if err != nil {
		return TakeResult{}, s.failTake(ctx, op, sn, b, err.Error())
	}
	caller := snapshots.CallerOf(op)
	start := s.now()
	if op.TaskEnded != nil && op.StartedAt != nil {
		start = *op.StartedAt // the take began before the job snoozed on its task
	}

	var all []*snapshots.Snapshot // the box's snapshots, once read after the take
	if sn.State == snapshots.StateTaking {
		if err := s.takeStepsRecorded(ctx, op, sn, b, resuming, recorded); err != nil {
			return TakeResult{}, err
		}
		taken, stop, err := s.takeOnBackend(ctx, op, params, sn, b, be, resuming)
		if stop {
			return TakeResult{}, err
		}
		took := s.now().Sub(start)
		// Recorded as taken, the operation moved on to the limit's step,
		// and the box's snapshots read, in one statement.
		if all, err = s.markTakenStep(ctx, op, sn, taken, took, &snapshots.TakenEvent{Caller: caller, Op: op.ID,
			Words: logTakenWords(sn.Name, sn.ID, snapshots.HoldsWords(sn.Holds, sn.Scope), took)}); err != nil {
			return TakeResult{}, err
		}
	}
	return s.takeLimitDone(ctx, op, sn, b, be, caller, all)
}

// takeStepsRecorded records the steps a take runs first, unless its start
// recorded them: the picture's (a new take of a box with a screen, whose
// picture it takes now), then the snapshot's. op.Step is the snapshot's
// when it returns.
func (s *Take) takeStepsRecorded(ctx context.Context, op *snapshots.Operation, sn *snapshots.Snapshot, b *snapshots.Box, resuming, recorded bool) error {
	picture := !resuming && sn.Picture != "off" && b.HasScreen
	if picture {
		if !recorded {
			if err := s.k.Step(ctx, op, snapshots.StepPicture); err != nil {
				return err
			}
		}
		op.Step = snapshots.StepPicture
		if s.pictures != nil {
			s.pictures.TakePicture(ctx, b, sn)
		}
	}
	if picture || !recorded {
		if err := s.k.Step(ctx, op, snapshots.StepSnapshot); err != nil {
			return err
		}
	}
	op.Step = snapshots.StepSnapshot
	return nil
}

// takeOnBackend has the backend take the snapshot, or, resuming, finds the
// one it took before the restart by its label. stop says the run ends
// here, with err (nil when the operation ended failed); otherwise taken is
// what the backend took.
func (s *Take) takeOnBackend(ctx context.Context, op *snapshots.Operation, params takeParams, sn *snapshots.Snapshot, b *snapshots.Box, be snapshots.Backend, resuming bool) (taken providers.SnapshotTaken, stop bool, err error) {
	if resuming {
		// The take may have happened before the restart: look for its
		// label before taking again. One whole on its host but not yet
		// in the content store is asked of the backend again, with its
		// label, which ships the rest.
		if held, ok, herr := s.findHeld(ctx, be, sn.ID); herr == nil && ok && !held.Unshipped {
			if held.Incomplete {
				return taken, true, s.incompleteTake(ctx, op, sn, b, held.Error)
			}
			return providers.SnapshotTaken{Ref: held.Ref.Ref, Storage: held.Storage, CapturedAt: held.TakenAt,
				Holds: held.Holds, Size: held.Size, ResetVersion: held.Label.ResetVersion, Parent: held.Parent}, false, nil
		}
	}
	label := providers.Label{Install: s.install, Box: b.ID, Snapshot: sn.ID}
	// A backend task is waited for by the job's snooze: the take
	// resumes here and finds its snapshot by its label. One whose
	// task failed and left nothing asks once more and waits in place,
	// so the backend says why in its own words.
	// The room again, now from the copy's size the backend learns.
	settings, _ := s.k.ReadSettings(ctx)
	taken, err = be.Snap.Snapshot(ctx, snapshots.GuestOf(b), providers.SnapshotTake{Label: label, Memory: params.Memory, RoomPercent: settings.RoomPercent}, s.k.TaskRecorder(op))
	if operations.Pending(err) {
		return taken, true, err
	}
	if err != nil {
		if errors.Is(err, providers.ErrIncomplete) {
			return taken, true, s.incompleteTake(ctx, op, sn, b, err.Error())
		}
		if ctx.Err() != nil {
			return taken, true, ctx.Err() // the worker is stopping: River retries, and the take resumes
		}
		return taken, true, s.failTake(ctx, op, sn, b, err.Error())
	}
	return taken, false, nil
}

// takeLimitDone ends a take whose snapshot is taken: the per-box limit,
// where an agent's sixth replaces its thread's oldest, checked again now,
// eligible at the moment of the change; then it answers the take's result
// (the runner returns it, the engine records it) with the snapshot as the
// box's snapshots hold it. all is the box's snapshots read with the take's
// record, or nil: one read serves the limit and the answer; a second only
// when the limit deleted one.
func (s *Take) takeLimitDone(ctx context.Context, op *snapshots.Operation, sn *snapshots.Snapshot, b *snapshots.Box, be snapshots.Backend, caller snapshots.Caller, all []*snapshots.Snapshot) (TakeResult, error) {
	var err error
	if all == nil {
		if err := s.k.Step(ctx, op, snapshots.StepLimit); err != nil {
			return TakeResult{}, err
		}
		if all, err = s.k.SnapshotsOfBox(ctx, s.st.Pool, b.ID); err != nil {
			return TakeResult{}, err
		}
	}
	st, err := s.k.Settings(ctx)
	if err != nil {
		return TakeResult{}, err
	}
	replaced, err := s.applyLimit(ctx, op, b, be, caller, all, st.PerBox)
	if err != nil {
		return TakeResult{}, err
	}
	if replaced != "" {
		if all, err = s.k.SnapshotsOfBox(ctx, s.st.Pool, b.ID); err != nil {
			return TakeResult{}, err
		}
	}
	id := sn.ID
	if sn = snapshotIn(all, id); sn == nil {
		return TakeResult{}, fmt.Errorf("read %s after its take: %w", id, store.ErrNotFound)
	}
	res := TakeResult{Snapshot: sn.ID, Name: sn.Name, Holds: sn.Holds, Size: sn.SizeBytes, Count: snapshots.CountTowardLimit(all),
		Limit: st.PerBox, Replaced: replaced}
	if sn.Excludes != nil {
		res.Excludes = *sn.Excludes
	}
	if sn.TookMs != nil {
		res.TookMs = int64(*sn.TookMs)
	}
	if sn.PausedMs != nil {
		res.PausedMs = int64(*sn.PausedMs)
	}
	return res, nil
}

// markTakenStep is MarkTaken for a take's own run, in one statement
// (TakeSnapshotTaken): with the record, its event and the head, the
// operation moves on to the limit's step, and the box's snapshots as they
// are then are answered.
func (s *Take) markTakenStep(ctx context.Context, op *snapshots.Operation, sn *snapshots.Snapshot, t providers.SnapshotTaken, took time.Duration, ev *snapshots.TakenEvent) ([]*snapshots.Snapshot, error) {
	a := snapshots.TakenParams(sn, t, took, ev, s.now())
	all, err := snapshots.SnapshotRows(s.st.TakeSnapshotTaken(ctx, s.st.Pool, db.TakeSnapshotTakenParams{ID: a.ID, BoxID: a.BoxID,
		BackendID: a.BackendID, ParentRef: a.ParentRef, Ref: a.Ref, Storage: a.Storage, CapturedAt: a.CapturedAt, TookMs: a.TookMs,
		PausedMs: a.PausedMs, Holds: a.Holds, SizeBytes: a.SizeBytes, SizeMeaning: a.SizeMeaning, ForkSafe: a.ForkSafe,
		Excludes: a.Excludes, LogKind: snapshots.EvSnapshotTaken, ActorKind: a.ActorKind, ActorThread: a.ActorThread, ActorWhy: a.ActorWhy,
		Words: a.Words, OperationID: op.ID, NextStep: snapshots.StepLimit}))
	if err != nil {
		return nil, fmt.Errorf("record take of %s: %w", sn.ID, err)
	}
	if snapshotIn(all, sn.ID) == nil || snapshotIn(all, sn.ID).State != snapshots.StateReady {
		return nil, fmt.Errorf("record take of %s: it is no longer taking", sn.ID)
	}
	op.Step = snapshots.StepLimit
	return all, nil
}

func (s *Take) failTake(ctx context.Context, op *snapshots.Operation, sn *snapshots.Snapshot, b *snapshots.Box, words string) error {
	if err := s.k.MoveState(ctx, s.st.Pool, sn, snapshots.StateFailed, words); err != nil {
		return err
	}
	s.k.Log(ctx, s.st.Pool, b.ID, snapshots.EvSnapshotFailed, snapshots.CallerOf(op), logTakeFailedWords(sn.Name, words), sn.ID, op.ID, nil)
	return s.k.End(ctx, op, snapshots.OpFailed, words, "")
}

func (s *Take) incompleteTake(ctx context.Context, op *snapshots.Operation, sn *snapshots.Snapshot, b *snapshots.Box, words string) error {
	if err := s.k.MoveState(ctx, s.st.Pool, sn, snapshots.StateIncomplete, words); err != nil {
		return err
	}
	s.k.Log(ctx, s.st.Pool, b.ID, snapshots.EvSnapshotFailed, snapshots.CallerOf(op), logTakeIncompleteWords(sn.Name, words), sn.ID, op.ID, nil)
	return s.k.End(ctx, op, snapshots.OpFailed, failPartExistsWords(words), "")
}

// applyLimit deletes what the per-box limit replaces once a take is ready:
// the oldest snapshot an agent of the same thread took and nobody kept,
// checked by eligible now. It never deletes another thread's, the person's,
// a kept one, an undo or a pinned one. all is the box's snapshots as they
// are now, perBox the limit. It answers operations.ErrTaskPending when the
// delete's task is left to the job's snooze; the step, resumed, finishes it.
func (s *Take) applyLimit(ctx context.Context, op *snapshots.Operation, b *snapshots.Box, be snapshots.Backend, caller snapshots.Caller, all []*snapshots.Snapshot, perBox int) (string, error) {
	// What this step began to delete before a restart goes first.
	notUndo := func(sn *snapshots.Snapshot) bool { return !sn.IsUndo() }
	left, err := s.del.FinishLeftDeletes(ctx, op, b, be, all, notUndo, snapshots.System("the per-box limit"), "the per-box limit")
	if err != nil {
		return "", err
	}
	if len(left) > 0 {
		return left[0], nil
	}
	over := snapshots.CountTowardLimit(all) - perBox
	if over <= 0 || caller.Kind != snapshots.CallerAgent {
		return "", nil
	}
	// Oldest first, as many as bring the box back to the limit; one whose
	// delete fails (left incomplete, still counted) is passed for the
	// next, and an incomplete one is deleted like a ready one.
	tz := s.k.TimeZone(ctx)
	replaced := ""
	tried := map[string]bool{snapshots.PinTarget(op): true}
	for over > 0 {
		ev := s.evictableExcept(ctx, s.st.Pool, caller.Thread, all, tried, tz)
		if ev == nil {
			return replaced, nil // nothing more may go: the box holds more until a person deletes one
		}
		tried[ev.ID] = true
		if err := s.del.DeleteStep(ctx, op, ev, b, be, snapshots.System("the per-box limit"), "the per-box limit"); err != nil {
			if operations.Pending(err) {
				return replaced, err // the job snoozes on the backend's delete; the limit's step finishes it
			}
			s.logger.Warn("the per-box limit could not delete", "snapshot", ev.ID, "err", err)
			continue
		}
		over--
		if replaced == "" {
			replaced = ev.Name
		}
	}
	return replaced, nil
}

// snapshotIn is the snapshot id among all, or nil.
func snapshotIn(all []*snapshots.Snapshot, id string) *snapshots.Snapshot {
	for _, sn := range all {
		if sn.ID == id {
			return sn
		}
	}
	return nil
}
