package restore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/boxsnap/boxsnap/app/operations"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/store"
	"github.com/boxsnap/boxsnap/providers"
)

// Reset: the box is made fresh again from the template it was made from,
// after an undo of its old state is taken under the same rules as a restore's
// undo (room, ceiling, at most 2 a box); with Keep logins, the login files of
// providers.DefaultLogins and the settings are carried over from that undo
// into the fresh box. If a kept login cannot be written back, the reset
// undoes itself: the box goes back to its undo.
//
// What an agent's reset can touch on the host: only its own thread's box
// (MayAct), through the backend's Resetter, which replaces the box's own
// folder with a copy of a template folder inside the templates folder, and
// writes each kept login beneath the box's folder with no link followed.
// The agent names the box and, at most, a box template the owner made; it
// never names a path, a source, a host or a login file (those come from the
// template and the settings).

// ResetRequest asks to reset a box to a fresh one.
type ResetRequest struct {
	Box string `json:"box"`
	// KeepLogins carries the login files over (moatbox's Keep logins).
	KeepLogins bool `json:"keepLogins"`
	// Template is a box template's name to reset to; empty is the template
	// the box was made from.
	Template string `json:"template,omitempty"`
	// Force is the person's "Reset anyway", past what the guard names.
	Force     bool   `json:"force,omitempty"`
	RequestID string `json:"requestId,omitempty"`
	// dryRun checks everything the reset would check and admits nothing
	// (ResetCheck).
	dryRun bool
}

// LoginPaths are the home paths a reset with Keep logins carries over:
// moatbox's list, then the settings' own.
func LoginPaths(st snapshots.Settings) []string {
	var out []string
	seen := map[string]bool{}
	add := func(p string) {
		p = strings.Trim(strings.TrimSpace(p), "/")
		if p != "" && !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	for _, l := range providers.DefaultLogins() {
		for _, f := range l.Files {
			add(f)
		}
	}
	for _, p := range st.KeepLogins {
		add(p)
	}
	return out
}

// Reset admits a reset: the box's own rules as a restore's (who may, the
// guard, an execution machine, the undo's room), the template to reset to,
// and the backend's ability, before anything changes.
func (s *Resets) Reset(ctx context.Context, c snapshots.Caller, req ResetRequest) (*snapshots.Operation, error) {
	if op, err := s.k.Repeated(ctx, c, req.RequestID, snapshots.OpReset, req.Box, ""); err != nil || op != nil {
		return op, err
	}
	b, err := s.k.Box(ctx, c, req.Box)
	if err != nil {
		return nil, err
	}
	if err := snapshots.MayAct(c, snapshots.ActRestore, b, nil); err != nil {
		return nil, err
	}
	if c.Kind == snapshots.CallerAgent {
		req.Force = false
	}
	if op, err := s.k.ExistingRequest(ctx, s.st.Pool, c, req.RequestID, snapshots.OpReset, nil); err != nil || op != nil {
		return op, err
	}
	settings, err := s.k.Settings(ctx)
	if err != nil {
		return nil, err
	}
	if c.Kind == snapshots.CallerAgent && !settings.AgentsMayRestore {
		return nil, refusal(snapshots.CodeForbidden, agentsDoNotResetWords(b.Name))
	}
	if b.IsExecutionMachine() {
		return nil, refusal(snapshots.CodeGuard, s.r.executionMachineWords(ctx, c, b))
	}
	be, err := s.k.Backend(b.BackendID)
	if err != nil {
		return nil, err
	}
	if _, ok := be.Snap.(providers.Resetter); !ok {
		return nil, refusal(snapshots.CodeCannot, ResetNotBuiltWords(be, b))
	}
	if _, ok := be.Snap.(providers.Browser); req.KeepLogins && !ok {
		return nil, refusal(snapshots.CodePlan, cannotReadLoginsWords(be.Label, b.Name))
	}
	p := resetParams{KeepLogins: req.KeepLogins}
	if req.KeepLogins {
		p.Logins = LoginPaths(settings)
	}
	if err := s.resetSource(ctx, b, req.Template, &p); err != nil {
		return nil, err
	}
	plan, err := s.k.PlanNow(ctx, b, be, nil)
	if err != nil {
		return nil, s.k.PlanError(b, be, err)
	}
	if !plan.Take.OK {
		why := plan.Take.Why
		if why == "" {
			why = snapshots.NoUndoCanBeTakenWords(b.Name, be.Label)
		}
		return nil, &snapshots.Refusal{Code: snapshots.CodePlan, Words: notResetWithoutUndoWords(why), TryAgain: plan.Take.TryAgain}
	}
	if err := s.k.RoomFor(ctx, c, b, be, plan, settings, plan.Take.AddsBytes); err != nil {
		return nil, undoRoomWords(snapshots.Agent(""), err) // a reset always takes its undo
	}
	if guard := s.r.Guard(ctx, c, b); len(guard) > 0 && !req.Force {
		w := strings.Join(guard, " ")
		if c.Kind == snapshots.CallerAgent {
			return nil, &snapshots.Refusal{Code: snapshots.CodeGuard, TryAgain: true, Words: guardNowWords(b.Name, "reset", w)}
		}
		return nil, &snapshots.Refusal{Code: snapshots.CodeGuard, Words: resetGuardWords(b.Name, w)}
	}
	if req.dryRun {
		return nil, resetEligibleNow(ctx, s, c, b, be, settings)
	}
	if st, err := be.Boxes.Status(ctx, snapshots.GuestOf(b)); err == nil {
		p.WasRunning = st.Running
	}
	var op *snapshots.Operation
	err = store.InTx(ctx, s.st.Pool, func(tx pgx.Tx) error {
		b, err := s.k.LockBox(ctx, tx, b.ID)
		if err != nil {
			return err
		}
		if b.State != snapshots.BoxReady {
			return refusal(snapshots.CodeBusy, boxIsWords(b.Name, b.State))
		}
		if err := s.k.Unsettled(ctx, tx, b); err != nil {
			return err
		}
		if err := s.k.CeilingAdmits(ctx, tx, c, b.BackendID, snapshots.ChargeOfPlan(be.Snap.Snapshotting(b.Kind)), settings); err != nil {
			return undoPriceWords(snapshots.Agent(""), err) // a reset always takes its undo
		}
		reserved, err := s.k.ReserveRoom(ctx, tx, c, b, be, plan, settings, plan.Take.AddsBytes)
		if err != nil {
			return undoRoomWords(snapshots.Agent(""), err)
		}
		op, err = s.k.Admit(ctx, tx, snapshots.OpRequest{Kind: snapshots.OpReset, Box: b, Caller: c, RequestID: req.RequestID, Params: p, Reserved: reserved})
		if err != nil {
			return err
		}
		return s.k.ReservePrice(ctx, tx, op.ID, b.BackendID, be.Snap.Snapshotting(b.Kind))
	})
	return op, err
}

// resetSource fills p with what the box resets to: the box template named
// (which must make boxes on the box's backend), or what the box was made
// from (its box template as it is now, if it still exists).
func (s *Resets) resetSource(ctx context.Context, b *snapshots.Box, name string, p *resetParams) error {
	if name == "" {
		mf, err := s.st.MadeFromByBox(ctx, s.st.Pool, b.ID)
		if errors.Is(err, pgx.ErrNoRows) {
			return refusal(snapshots.CodeInvalid, notFromTemplateWords(b.Name))
		}
		if err != nil {
			return fmt.Errorf("read what %s was made from: %w", b.Name, err)
		}
		if mf.Template == "" {
			p.Source, p.Command = mf.Source, mf.Command
			return nil
		}
		t, err := s.boxes.Template(ctx, mf.Template)
		if err != nil {
			p.Source, p.Command = mf.Source, mf.Command // the template is gone: the source as it was
			return nil
		}
		name = t.Name
	}
	t, err := s.boxes.Template(ctx, name)
	if err != nil {
		return err
	}
	if t.Backend != b.BackendID {
		return refusal(snapshots.CodeInvalid, templateElsewhereWords(t.Name, t.Backend, b.Name, b.BackendID))
	}
	p.Template, p.Source, p.Command = t.Name, t.Source, t.Command
	return nil
}

// runReset runs a reset from the step it reached: the undo, the stop, the
// fresh box, the kept logins, the start, then older undos replaced.
func (s *Resets) runReset(ctx context.Context, op *snapshots.Operation, p resetParams) (ResetResult, error) {
	resuming := op.Resuming // after a restart, or after the undo's task, which the job snoozed on
	b, err := s.k.BoxByID(ctx, s.st.Pool, *op.BoxID)
	if err != nil {
		return ResetResult{}, err
	}
	be, err := s.k.Backend(b.BackendID)
	if err != nil {
		return ResetResult{}, s.k.End(ctx, op, snapshots.OpFailed, err.Error(), observedNothingChanged)
	}
	rs, ok := be.Snap.(providers.Resetter)
	if !ok {
		return ResetResult{}, s.k.End(ctx, op, snapshots.OpFailed, ResetNotBuiltWords(be, b), observedNothingChanged)
	}
	steps := []string{string(providers.StepUndo), snapshots.StepStop, snapshots.StepReset, snapshots.StepLogins, snapshots.StepStart, snapshots.StepUndos}
	start := 0
	for i, st := range steps {
		if st == op.Step {
			start = i
		}
	}
	g := snapshots.GuestOf(b)
	res := ResetResult{Template: p.Template, Started: p.WasRunning}
	var undo *snapshots.Snapshot
	if op.UndoID != nil {
		undo, _ = s.k.SnapshotByID(ctx, s.st.Pool, *op.UndoID)
	}
	for _, step := range steps[start:] {
		if err := s.k.Step(ctx, op, step); err != nil {
			return ResetResult{}, err
		}
		switch step {
		case string(providers.StepUndo):
			u, err := s.taker.TakeUndo(ctx, op, b, be, resuming)
			if operations.Pending(err) {
				return ResetResult{}, err // the job snoozes on the undo's task; the resumed run finds it by its label
			}
			if err != nil {
				if ctx.Err() != nil {
					return ResetResult{}, ctx.Err()
				}
				return ResetResult{}, s.resetFailed(ctx, op, b, resetWhyUndo(err), observedNothingChanged)
			}
			undo = u
		case snapshots.StepStop:
			if err := be.Boxes.Stop(ctx, g); err != nil && !errors.Is(err, providers.ErrNotFound) {
				if ctx.Err() != nil {
					return ResetResult{}, ctx.Err()
				}
				return ResetResult{}, s.resetFailed(ctx, op, b, resetWhyStop(err), observedNothingChanged)
			}
		case snapshots.StepReset:
			if stop, err := s.freshBox(ctx, op, b, be, rs, undo, p); stop {
				return ResetResult{}, err
			}
		case snapshots.StepLogins:
			if !p.KeepLogins {
				continue
			}
			kept, skipped, err := s.carryLogins(ctx, b, be, rs, undo, p.Logins)
			res.Kept, res.Skipped = kept, skipped
			if err != nil {
				if ctx.Err() != nil {
					return ResetResult{}, ctx.Err()
				}
				return ResetResult{}, s.undoReset(ctx, op, b, be, undo, p, err.Error())
			}
		case snapshots.StepStart:
			if !p.WasRunning {
				continue
			}
			if err := be.Boxes.Start(ctx, g); err != nil {
				if ctx.Err() != nil {
					return ResetResult{}, ctx.Err()
				}
				return ResetResult{}, s.resetFailed(ctx, op, b, resetWhyStart(err), observedResetStopped)
			}
		case snapshots.StepUndos:
			replaced, err := s.r.replaceUndos(ctx, op, b, be, "")
			if err != nil {
				return ResetResult{}, err // the job snoozes on the backend's delete, and resumes here
			}
			res.Replaced = replaced
		}
	}
	if undo != nil {
		res.Undo, res.UndoName = undo.ID, undo.Name
	}
	s.k.Log(ctx, s.st.Pool, b.ID, snapshots.EvReset, snapshots.CallerOf(op), resetWords(res), "", op.ID, res)
	return res, nil
}

// resetSpec is the box b made fresh from p's template source and command.
// It runs as its box template says: its user, environment and limits,
// read now so no secret of its environment is kept in the operation's
// parameters. With no template (or one gone) the backend keeps the box's
// own.
func (s *Resets) resetSpec(ctx context.Context, b *snapshots.Box, p resetParams) providers.BoxSpec {
	spec := providers.BoxSpec{Box: providers.BoxIdentity{ID: b.ID, Name: b.Name, Kind: b.Kind, Install: s.install},
		Template: p.Source, Command: p.Command}
	if p.Template != "" {
		if t, err := s.boxes.Template(ctx, p.Template); err == nil {
			spec.User, spec.Env, spec.Limits = t.User, maps.Clone(t.Env), t.Limits
		}
	}
	return spec
}

// freshBox is the reset's own step: the backend makes the box fresh, its
// access is set straight, and its head is cleared. A failure brings the
// box back from its undo. stop says the run ends here, with err (nil when
// the operation ended); otherwise the run goes on.
func (s *Resets) freshBox(ctx context.Context, op *snapshots.Operation, b *snapshots.Box, be snapshots.Backend, rs providers.Resetter, undo *snapshots.Snapshot, p resetParams) (stop bool, err error) {
	spec := s.resetSpec(ctx, b, p)
	if err := rs.ResetGuest(ctx, snapshots.GuestOf(b), spec); err != nil {
		if ctx.Err() != nil {
			return true, ctx.Err()
		}
		return true, s.undoReset(ctx, op, b, be, undo, p, resetWhyFresh(err))
	}
	s.recordResetRun(ctx, b.ID, spec)
	if err := s.r.SetStraight(ctx, op.ID, b, be, "the reset"); err != nil {
		return true, s.undoReset(ctx, op, b, be, undo, p, resetWhyAccess(err))
	}
	s.clearHead(ctx, b.ID)
	return false, nil
}

func (s *Resets) resetFailed(ctx context.Context, op *snapshots.Operation, b *snapshots.Box, words, observed string) error {
	words = resetUnfinishedWords(words)
	s.k.Log(ctx, s.st.Pool, b.ID, snapshots.EvResetFailed, snapshots.CallerOf(op), logThenWords(words, observed), "", op.ID, nil)
	return s.k.End(ctx, op, snapshots.OpFailed, words, observed)
}

// undoReset puts the box back to its undo after a reset that could not
// finish, a kept login that could not be written back above all: the reset
// undoes itself, and says why.
func (s *Resets) undoReset(ctx context.Context, op *snapshots.Operation, b *snapshots.Box, be snapshots.Backend, undo *snapshots.Snapshot, p resetParams, why string) error {
	if undo == nil {
		return s.resetFailed(ctx, op, b, resetWhyNoUndo(why), observedMayBeFresh)
	}
	g := snapshots.GuestOf(b)
	ref := snapshots.RefOf(undo, b)
	rec := s.ops.Recorder(op)
	back := func() error {
		if err := be.Boxes.Stop(ctx, g); err != nil && !errors.Is(err, providers.ErrNotFound) {
			return err
		}
		if _, err := be.Snap.RestoreSnapshot(ctx, g, ref, providers.StepRollback, rec); err != nil {
			return err
		}
		if err := s.r.SetStraight(ctx, op.ID, b, be, "the reset's undo"); err != nil {
			return err
		}
		s.k.SetHead(ctx, s.st.Pool, b.ID, undo.ID)
		if swapsAtStart(be, b) {
			// Its rollback made the box's new guest; its start step puts
			// it in the box's place, running.
			if _, err := be.Snap.RestoreSnapshot(ctx, g, ref, providers.StepStart, rec); err != nil {
				return err
			}
			if !p.WasRunning {
				return be.Boxes.Stop(ctx, g)
			}
			return nil
		}
		if p.WasRunning {
			return be.Boxes.Start(ctx, g)
		}
		return nil
	}
	if err := back(); err != nil {
		words := resetNotBackWords(why, b.Name, err, undo.Name)
		s.k.Log(ctx, s.st.Pool, b.ID, snapshots.EvResetFailed, snapshots.CallerOf(op), words, undo.ID, op.ID, nil)
		return s.k.End(ctx, op, snapshots.OpFailed, words, observedFreshNoLogins)
	}
	words := resetUndoneWords(why, b.Name, undo.Name)
	s.k.Log(ctx, s.st.Pool, b.ID, snapshots.EvResetUndone, snapshots.CallerOf(op), words, undo.ID, op.ID, nil)
	return s.r.kinds.Reset.EndWith(ctx, op, snapshots.OpFailed, ResetResult{Undo: undo.ID, UndoName: undo.Name, UndoneItself: true}, words, observedAsBeforeReset)
}

// swapsAtStart says whether the backend's restore makes a new guest that its
// start step swaps into the box's place (Docker's), so that a rollback
// alone leaves the box as it was.
func swapsAtStart(be snapshots.Backend, b *snapshots.Box) bool {
	sn := be.Snap.Snapshotting(b.Kind)
	return sn != nil && sn.Restore == providers.RestoreNewGuest
}

// carryLogins writes each login file the undo holds in a home-like folder
// into the fresh box, at the same path with its mode. A file over
// providers.MaxLoginBytes is skipped and said; of Claude Code's account
// file only the account is carried. It answers what it kept and skipped,
// and the first write that failed.
func (s *Resets) carryLogins(ctx context.Context, b *snapshots.Box, be snapshots.Backend, rs providers.Resetter, undo *snapshots.Snapshot, logins []string) ([]string, []string, error) {
	br, ok := be.Snap.(providers.Browser)
	if !ok || undo == nil {
		return nil, nil, errors.New("could not read the logins back from the undo")
	}
	ref := snapshots.RefOf(undo, b)
	var dirs []string
	for _, top := range []string{"", "home", "Users"} {
		es, err := br.ListFiles(ctx, ref, top)
		if err != nil {
			continue // no such folder in the box
		}
		for _, e := range es {
			if e.Type == "dir" {
				dirs = append(dirs, e.Path)
			}
		}
	}
	var kept, skipped []string
	for _, home := range providers.Homes(dirs) {
		for _, l := range logins {
			rel := strings.TrimPrefix(home+"/"+l, "/")
			e, found, err := s.loginEntry(ctx, br, ref, rel)
			if err != nil {
				return kept, skipped, fmt.Errorf("could not read %s from the undo: %v", rel, err)
			}
			if !found {
				continue
			}
			if e.Type != "file" {
				skipped = append(skipped, rel+" is not a file")
				continue
			}
			if e.Size > providers.MaxLoginBytes {
				skipped = append(skipped, fmt.Sprintf("%s is %.1f MiB, over 1 MiB", rel, float64(e.Size)/(1<<20)))
				continue
			}
			var buf bytes.Buffer
			if _, err := br.ReadFile(ctx, ref, rel, &buf); err != nil {
				return kept, skipped, fmt.Errorf("could not read %s from the undo: %v", rel, err)
			}
			data := buf.Bytes()
			if path.Base(l) == providers.ClaudeAccountFile && path.Dir(l) == "." {
				acct, ok := accountOnly(data)
				if !ok {
					skipped = append(skipped, rel+" holds no account boxsnap can read")
					continue
				}
				data = acct
			}
			if err := rs.WriteBoxFile(ctx, snapshots.GuestOf(b), rel, data, fs.FileMode(e.Mode)&fs.ModePerm); err != nil {
				return kept, skipped, fmt.Errorf("could not write the kept login %s back: %v", rel, err)
			}
			kept = append(kept, rel)
		}
	}
	return kept, skipped, nil
}

// loginEntry finds rel in the snapshot, through its folder's listing.
func (s *Resets) loginEntry(ctx context.Context, br providers.Browser, ref providers.SnapshotRef, rel string) (providers.FileEntry, bool, error) {
	dir := path.Dir(rel)
	if dir == "." {
		dir = ""
	}
	es, err := br.ListFiles(ctx, ref, dir)
	var refused *providers.RefusedError
	switch {
	case errors.Is(err, providers.ErrNotFound), errors.As(err, &refused):
		return providers.FileEntry{}, false, nil // no such folder, or one through a link: nothing to keep
	case err != nil:
		return providers.FileEntry{}, false, err
	}
	for _, e := range es {
		if e.Path == rel {
			return e, true, nil
		}
	}
	return providers.FileEntry{}, false, nil
}

// accountOnly keeps only the account of Claude Code's account file
// (providers.AccountKeys), or false when it holds none.
func accountOnly(data []byte) ([]byte, bool) {
	var all map[string]json.RawMessage
	if json.Unmarshal(data, &all) != nil {
		return nil, false
	}
	out := map[string]json.RawMessage{}
	for _, k := range providers.AccountKeys {
		if v, ok := all[k]; ok {
			out[k] = v
		}
	}
	if len(out) == 0 {
		return nil, false
	}
	b, err := json.MarshalIndent(out, "", "  ")
	return b, err == nil
}

// clearHead forgets the box's head: a fresh box descends from none of its
// snapshots.
func (s *Resets) clearHead(ctx context.Context, box string) {
	if err := s.st.ResetHeadClear(ctx, s.st.Pool, box); err != nil {
		s.logger.Error("clear the box's head", "box", box, "err", err)
	}
}

// UndoNewest restores the box to its newest undo, of a reset or a restore
// (moatbox: "Undo always goes back to the newest undo point"), with the
// restore's own rules.
func (s *Resets) UndoNewest(ctx context.Context, c snapshots.Caller, boxRef, requestID string, force bool) (*snapshots.Operation, error) {
	if op, err := s.k.Repeated(ctx, c, requestID, snapshots.OpRestore, boxRef, ""); err != nil || op != nil {
		return op, err
	}
	b, err := s.k.Box(ctx, c, boxRef)
	if err != nil {
		return nil, err
	}
	// A repeated request is the same undo, though a newer undo exists now.
	if op, err := s.k.ExistingRequest(ctx, s.st.Pool, c, requestID, snapshots.OpRestore, nil); err != nil || op != nil {
		return op, err
	}
	id, err := s.st.ResetNewestUndo(ctx, s.st.Pool, b.ID)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, refusal(snapshots.CodeNotFound, snapshots.NoUndoToGoBackWords(b.Name))
	}
	if err != nil {
		return nil, fmt.Errorf("read %s's undos: %w", b.Name, err)
	}
	return s.r.Restore(ctx, c, snapshots.RestoreRequest{Box: b.ID, Snapshot: id, Replace: true, Force: force, RequestID: requestID})
}

// ResetPreview is what the reset dialog says before the person confirms.
type ResetPreview struct {
	// From says what the fresh box is a copy of, in words.
	From string
	// Why is set when the box cannot be reset now, in words.
	Why string
	// Logins are the files Keep logins carries over, per home folder.
	Logins []string
}

// PreviewReset reads what a reset of the box would do, changing nothing.
func (s *Resets) PreviewReset(ctx context.Context, c snapshots.Caller, boxRef, template string) (*ResetPreview, error) {
	b, err := s.k.Box(ctx, c, boxRef)
	if err != nil {
		return nil, err
	}
	st, err := s.k.Settings(ctx)
	if err != nil {
		return nil, err
	}
	pv := &ResetPreview{Logins: LoginPaths(st)}
	be, err := s.k.Backend(b.BackendID)
	if err != nil {
		return nil, err
	}
	if _, ok := be.Snap.(providers.Resetter); !ok {
		pv.Why = ResetNotBuiltWords(be, b)
		return pv, nil
	}
	var p resetParams
	if err := s.resetSource(ctx, b, template, &p); err != nil {
		if r, ok := snapshots.AsRefusal(err); ok {
			pv.Why = r.Words
			return pv, nil
		}
		return nil, err
	}
	switch {
	case p.Template != "":
		pv.From = "the box template " + p.Template
	case p.Source != "":
		pv.From = resetFromSourceWords(be.Kind, p.Source)
	default:
		pv.From = "an empty folder, as it was made"
	}
	return pv, nil
}

// NewestUndo is the box's newest undo, of a reset or a restore, as the
// caller may see it, or nil.
func (s *Resets) NewestUndo(ctx context.Context, c snapshots.Caller, boxRef string) (*snapshots.Snapshot, error) {
	b, err := s.k.Box(ctx, c, boxRef)
	if err != nil {
		return nil, err
	}
	id, err := s.st.ResetNewestUndo(ctx, s.st.Pool, b.ID)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s's undos: %w", b.Name, err)
	}
	sn, err := s.k.SnapshotByID(ctx, s.st.Pool, id)
	if err != nil || snapshots.MayAct(c, snapshots.ActSee, b, sn) != nil {
		return nil, nil
	}
	return sn, nil
}

// resetEligibleNow is the check a reset's admission makes in its
// transaction, read without locking: the box is ready, nothing is unsettled
// on it, and its undo is within the ceiling.
func resetEligibleNow(ctx context.Context, s *Resets, c snapshots.Caller, b *snapshots.Box, be snapshots.Backend, settings snapshots.Settings) error {
	b2, err := s.k.BoxByID(ctx, s.st.Pool, b.ID)
	if err != nil {
		return snapshots.BoxNotFound(b.Name)
	}
	b = b2
	if b.State != snapshots.BoxReady {
		return refusal(snapshots.CodeBusy, boxIsWords(b.Name, b.State))
	}
	if err := s.k.Unsettled(ctx, s.st.Pool, b); err != nil {
		return err
	}
	if err := s.k.CeilingAdmits(ctx, s.st.Pool, c, b.BackendID, snapshots.ChargeOfPlan(be.Snap.Snapshotting(b.Kind)), settings); err != nil {
		return undoPriceWords(snapshots.Agent(""), err)
	}
	return nil
}
