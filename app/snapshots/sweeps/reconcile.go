package sweeps

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/store"
	"github.com/boxsnap/boxsnap/app/store/db"
	"github.com/boxsnap/boxsnap/providers"
)

// ReconcileReport says what one reconcile did, per backend.
type ReconcileReport struct {
	// Listed is the backends whose listing succeeded (wholly or for some
	// hosts); Unreachable the backends or hosts that did not answer.
	Listed      []string
	Unreachable []string
	Unavailable int // records made unavailable
	Back        int // unavailable records ready again
	Missing     int // records first missed by a successful listing
	Lost        int // records lost: missed twice, snapshots.LostAfter apart
	Recorded    int // labelled snapshots of live boxes given a record again
	Kept        int // kept snapshots of gone boxes given a record as kept
	Found       int // snapshots of gone boxes listed as found
	Incomplete  int // of the above, incomplete ones
	// GuestsGone names the boxes whose guest is gone from its backend.
	GuestsGone []string
}

// Reconcile compares every backend's listing with boxsnap's records, so a
// snapshot's record follows where it lives and is found again: a record missing
// from a successful listing becomes lost only after two successful listings
// LostAfter apart; a failed listing marks the backend's (or the cut-off
// host's) snapshots unavailable and nothing lost; unavailable ones come back
// ready when a listing succeeds; a labelled snapshot with no record gets one
// again (by unknown, for a box that exists; as kept, for a gone box's kept
// one; as found, for a gone box's unkept one). It never deletes anything on
// a backend. A backend no longer in settings has its snapshots marked
// unavailable.
func (s *Sweeps) Reconcile(ctx context.Context) (ReconcileReport, error) {
	var rep ReconcileReport
	if err := s.unavailableWithoutBackend(ctx, &rep); err != nil {
		return rep, err
	}
	return s.reconcile(ctx, false, rep)
}

// ReconcileHere is the reconcile of this host's one-host backends alone
// (snapshots.Backend.OneHost): only this host lists them, so each host runs
// it on its own queue, while the reconcile that River's leader runs lists
// the leader's own and the backends every host reaches.
func (s *Sweeps) ReconcileHere(ctx context.Context) (ReconcileReport, error) {
	return s.reconcile(ctx, true, ReconcileReport{})
}

func (s *Sweeps) reconcile(ctx context.Context, oneHostOnly bool, rep ReconcileReport) (ReconcileReport, error) {
	for _, id := range s.order {
		if oneHostOnly && !s.backends[id].OneHost() {
			continue
		}
		if err := s.reconcileBackend(ctx, s.backends[id], &rep); err != nil {
			return rep, fmt.Errorf("reconcile %s: %w", id, err)
		}
	}
	return rep, nil
}

func (s *Sweeps) unavailableWithoutBackend(ctx context.Context, rep *ReconcileReport) error {
	all, err := snapshots.SnapshotRows(s.st.SweepSnapshotsNotIn(ctx, s.st.Pool, s.order))
	if err != nil {
		return fmt.Errorf("reconcile: %w", err)
	}
	owned := map[string]map[string]*string{}
	for _, sn := range all {
		if sn.State == snapshots.StateReady {
			if owner, err := s.ownerOf(ctx, owned, sn); err != nil {
				return fmt.Errorf("reconcile: %w", err)
			} else if owner != "" && s.host != "" && owner != s.host {
				continue // a backend of another host's, not in this host's settings
			}
			s.markUnavailable(ctx, sn, unavailableNotInSettingsWords(sn.BackendID))
			rep.Unavailable++
		}
	}
	return nil
}

func (s *Sweeps) markUnavailable(ctx context.Context, sn *snapshots.Snapshot, words string) {
	if err := s.k.MoveState(ctx, s.st.Pool, sn, snapshots.StateUnavailable, words); err != nil {
		s.logger.Warn("mark unavailable", "snapshot", sn.ID, "err", err)
		return
	}
	s.k.Log(ctx, s.st.Pool, sn.BoxID, snapshots.EvSnapshotUnavailable, snapshots.System(byReconcile),
		logSnapshotWhyWords(sn.Name, sn.ID, words), sn.ID, "", nil)
}

// reconcileBackend compares be's listing with its snapshots' records:
// records on a host (or a backend) that gave no answer are unavailable,
// the others settled as listed or not (reconcileListed,
// reconcileUnlisted); a labelled snapshot with no record is recorded
// again; then the backend's guests are checked.
func (s *Sweeps) reconcileBackend(ctx context.Context, be snapshots.Backend, rep *ReconcileReport) error {
	held, listErr := be.Snap.HeldSnapshots(ctx)
	cut := map[string]bool{}
	whole := false
	if listErr != nil {
		var hosts *providers.HostsUnreachableError
		switch {
		case errors.As(listErr, &hosts):
			for _, h := range hosts.Hosts {
				cut[h] = true
				rep.Unreachable = append(rep.Unreachable, be.ID+"/"+h)
			}
		case errors.Is(listErr, providers.ErrUnreachable):
			whole = true
			rep.Unreachable = append(rep.Unreachable, be.ID)
		default:
			// A listing that fails marks nothing: it proves nothing gone.
			s.logger.Warn("reconcile: listing failed; nothing marked", "backend", be.ID, "err", listErr)
			return nil
		}
	}
	records, err := snapshots.SnapshotRows(s.st.SweepSnapshotsOfBackend(ctx, s.st.Pool, be.ID))
	if err != nil {
		return fmt.Errorf("reconcile %s: %w", be.ID, err)
	}
	o, err := s.ownersOf(ctx, be)
	if err != nil {
		return err
	}
	if whole {
		s.markAllUnavailable(ctx, be, records, o, listErr, rep)
		return nil
	}
	rep.Listed = append(rep.Listed, be.ID)
	now := s.now()
	byID := s.heldByID(held)
	known := make(map[string]bool, len(records))
	for _, sn := range records {
		known[sn.ID] = true
		if _, listed := byID[sn.ID]; listed {
			s.claim(ctx, sn.BoxID, o)
		}
		if s.elsewhere(be, sn.Host, sn.BoxID, o) {
			continue
		}
		if cut[sn.Host] {
			if sn.State == snapshots.StateReady {
				s.markUnavailable(ctx, sn, unavailableNoAnswerWords(sn.Host, nil))
				rep.Unavailable++
			}
			continue
		}
		h, listed := byID[sn.ID]
		if listed {
			if err := s.reconcileListed(ctx, sn, h, rep); err != nil {
				return err
			}
			continue
		}
		if err := s.reconcileUnlisted(ctx, be, sn, now, rep); err != nil {
			return err
		}
	}
	for _, h := range byID {
		if known[h.Label.Snapshot] {
			continue
		}
		if err := s.recordAgain(ctx, be, h, now, rep); err != nil {
			s.logger.Warn("reconcile: record again", "snapshot", h.Label.Snapshot, "err", err)
		}
	}
	return s.checkGuests(ctx, be, o, rep)
}

// recordAgain gives a labelled snapshot with no record its record again.
func (s *Sweeps) recordAgain(ctx context.Context, be snapshots.Backend, h providers.HeldSnapshot, now time.Time, rep *ReconcileReport) error {
	if ok, err := s.mayRecordAgain(ctx, h); !ok {
		return err
	}
	tz := s.k.TimeZone(ctx)
	b, err := s.k.BoxByID(ctx, s.st.Pool, h.Label.Box)
	gone := errors.Is(err, store.ErrNotFound) || (err == nil && b.State == snapshots.BoxReleased)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	a := s.againRecord(ctx, be, h, b, gone, now)
	sn, err := s.insertAgain(ctx, be, h, b, a, now, tz)
	if errors.Is(err, store.ErrNotFound) {
		return nil // recorded meanwhile
	}
	if err != nil {
		return err
	}
	if a.where != "current" {
		// On a held copy or an earlier guest: the record says which guest.
		if err := s.st.HeldSetWhere(ctx, s.st.Pool, db.HeldSetWhereParams{ID: sn.ID, Guest: a.where, GuestRef: h.Ref.Guest.Ref}); err != nil {
			return err
		}
		sn.Guest = a.where
	}
	var keptAs *time.Time
	switch {
	case a.found:
		rep.Found++
	case a.gone:
		rep.Kept++
		keptAs = a.keptUntil
	default:
		rep.Recorded++
	}
	words := logFoundWords(sn.Name, sn.ID, a.host, a.found, keptAs, tz)
	if h.Incomplete {
		rep.Incomplete++
		words = logIncompleteToo(words, h.Error)
	}
	s.k.Log(ctx, s.st.Pool, sn.BoxID, snapshots.EvSnapshotFound, snapshots.System(byReconcile), words, sn.ID, "", nil)
	return nil
}

// mayRecordAgain says whether h may be recorded again: its label names
// boxsnap IDs (else an error), boxsnap did not delete it a moment ago (a
// listing read before its delete may still hold it: never bring it back),
// and no operation pins it (an import that published it and has not
// recorded it yet records it, resumed after a crash from its recorded
// step).
func (s *Sweeps) mayRecordAgain(ctx context.Context, h providers.HeldSnapshot) (bool, error) {
	if !snapshots.ValidID(snapshots.PrefixSnapshot, h.Label.Snapshot) || !snapshots.ValidID(snapshots.PrefixBox, h.Label.Box) {
		return false, fmt.Errorf("label %+v names no boxsnap IDs", h.Label)
	}
	deleted, err := s.st.SweepWasDeleted(ctx, s.st.Pool, h.Label.Snapshot)
	if err != nil {
		return false, fmt.Errorf("was %s deleted: %w", h.Label.Snapshot, err)
	}
	if deleted {
		return false, nil
	}
	if pins, err := s.k.Pins(ctx, s.st.Pool, h.Label.Snapshot, ""); err != nil || len(pins) > 0 {
		return false, err
	}
	return true, nil
}

// againFields is what a record made again holds beyond the listing's own
// words: where and in what state, whose, kept until when, whether its box
// is gone (then found, unless kept), and what it depends on.
type againFields struct {
	host, kind, where string
	state, errWords   string
	owner             string
	ownerThread       *string
	keptUntil         *time.Time
	found, gone       bool
	goneAt            *time.Time
	goneHow           *string
	fork              *int
	depends           []string
}

// againRecord works out the fields of h's record made again: the box's
// owner while the box is there (a person's when the label keeps it), kept
// while its label keeps it after its box is gone, else found; the parent
// it depends on when this backend's records know it.
func (s *Sweeps) againRecord(ctx context.Context, be snapshots.Backend, h providers.HeldSnapshot, b *snapshots.Box, gone bool, now time.Time) againFields {
	a := againFields{host: h.Host, kind: h.Ref.Guest.Kind, state: snapshots.StateReady, owner: "person", gone: gone, where: h.Ref.Where}
	if a.host == "" {
		a.host = h.Ref.Guest.Host
	}
	if h.Incomplete {
		a.state, a.errWords = snapshots.StateIncomplete, h.Error
	}
	kept := h.Label.KeptUntil != nil && h.Label.KeptUntil.After(now)
	switch {
	case !gone:
		a.owner, a.ownerThread = snapshots.OwnerOf(b)
		if h.Label.KeptUntil != nil {
			a.keptUntil, a.owner, a.ownerThread = h.Label.KeptUntil, "person", nil
		}
	case kept:
		a.keptUntil = h.Label.KeptUntil
	default:
		a.found = true
	}
	if gone {
		t := now
		a.goneAt = &t
		how := "released"
		a.goneHow = &how
	}
	if h.Label.ResetVersion > 0 {
		v := h.Label.ResetVersion
		a.fork = &v
	}
	if a.where == "" {
		a.where = "current"
	}
	if h.Parent != "" {
		if p, err := s.k.SnapshotByRef(ctx, be.ID, h.Parent); err == nil {
			a.depends = append(a.depends, p.ID)
		}
	}
	if a.depends == nil {
		a.depends = []string{}
	}
	return a
}

// insertAgain inserts h's record, with a's fields, under a name unique in
// its box, in one transaction; where the box's record is gone too (a lost
// database), a released box stands for it, named by its ID. It answers
// store.ErrNotFound when the snapshot was recorded meanwhile.
func (s *Sweeps) insertAgain(ctx context.Context, be snapshots.Backend, h providers.HeldSnapshot, b *snapshots.Box, a againFields, now time.Time, tz *time.Location) (*snapshots.Snapshot, error) {
	var sn *snapshots.Snapshot
	err := store.InTx(ctx, s.st.Pool, func(tx pgx.Tx) error {
		boxName, boxKind := h.Label.Box, a.kind
		var boxSystem string
		var boxThread *string
		if b == nil {
			if err := s.st.SweepGoneBoxInsert(ctx, tx, db.SweepGoneBoxInsertParams{ID: h.Label.Box, Name: h.Label.Box, Kind: a.kind,
				BackendID: be.ID, Host: a.host, GuestRef: h.Ref.Guest.Ref, ReleasedAt: &now, OwnerHost: s.k.OwnerFor(be)}); err != nil {
				return err
			}
		} else {
			boxName, boxKind, boxSystem, boxThread = b.Name, b.Kind, b.System, b.ThreadID
		}
		taken, err := s.k.NamesOfBox(ctx, tx, h.Label.Box)
		if err != nil {
			return err
		}
		name := snapshots.UniqueName(snapshots.DefaultName(h.TakenAt, tz), taken)
		sn, err = snapshots.SnapshotRow(s.st.SweepSnapshotInsert(ctx, tx, db.SweepSnapshotInsertParams{ID: h.Label.Snapshot,
			BoxID: h.Label.Box, BoxName: boxName, BoxKind: boxKind, BoxSystem: boxSystem, BoxThreadID: boxThread,
			BoxGoneAt: a.goneAt, BoxGoneHow: a.goneHow, BackendID: be.ID, Host: a.host, Storage: h.Storage, Guest: a.where,
			Name: name, TakenAt: h.TakenAt, Holds: string(orDisk(h.Holds)), OwnerKind: a.owner, OwnerThreadID: a.ownerThread,
			KeptUntil: a.keptUntil, Now: now, ForkSafe: a.fork, DependsOn: a.depends, Ref: h.Ref.Ref, State: a.state,
			Error: snapshots.NilIfEmpty(a.errWords), Found: a.found}))
		return err
	})
	return sn, err
}

func orDisk(h providers.Holds) providers.Holds {
	if h == "" {
		return providers.HoldsDisk
	}
	return h
}

// markAllUnavailable marks each ready snapshot of records unavailable, as
// the backend gave no answer (listErr).
func (s *Sweeps) markAllUnavailable(ctx context.Context, be snapshots.Backend, records []*snapshots.Snapshot, o *owners, listErr error, rep *ReconcileReport) {
	for _, sn := range records {
		if sn.State == snapshots.StateReady && !s.elsewhere(be, sn.Host, sn.BoxID, o) {
			s.markUnavailable(ctx, sn, unavailableNoAnswerWords(be.Label, listErr))
			rep.Unavailable++
		}
	}
}

// heldByID gives the snapshots of held labelled by this install, by their
// snapshot's ID, the preferred one where two hold the same.
func (s *Sweeps) heldByID(held []providers.HeldSnapshot) map[string]providers.HeldSnapshot {
	byID := make(map[string]providers.HeldSnapshot, len(held))
	for _, h := range held {
		if h.Label.Install == s.install && h.Label.Snapshot != "" {
			if prev, ok := byID[h.Label.Snapshot]; ok && !snapshots.PreferHeld(h, prev) {
				continue
			}
			byID[h.Label.Snapshot] = h
		}
	}
	return byID
}

// reconcileListed settles a record whose snapshot the backend listed (h):
// an unavailable one is back, one missing is seen again, and one cut short
// before its record had the backend's reference gets it.
func (s *Sweeps) reconcileListed(ctx context.Context, sn *snapshots.Snapshot, h providers.HeldSnapshot, rep *ReconcileReport) error {
	if sn.State == snapshots.StateUnavailable {
		if err := s.k.MoveState(ctx, s.st.Pool, sn, snapshots.StateReady, ""); err == nil {
			rep.Back++
		}
	}
	if sn.MissingSince != nil {
		if err := s.st.SweepSeen(ctx, s.st.Pool, sn.ID); err != nil {
			return err
		}
	}
	if sn.Ref == "" && h.Ref.Ref != "" {
		// A take cut short before its record had the backend's
		// reference (an incomplete one): record it, so a Delete can
		// finish the backend's clean-up.
		if err := s.st.SweepSetRef(ctx, s.st.Pool, db.SweepSetRefParams{ID: sn.ID, Ref: h.Ref.Ref}); err != nil {
			return err
		}
	}
	return nil
}

// reconcileUnlisted settles a record whose snapshot a listing that
// succeeded for its host did not list: an unavailable one is back, then a
// ready one is missing from now, and lost once missing for LostAfter, unless
// an operation uses it.
func (s *Sweeps) reconcileUnlisted(ctx context.Context, be snapshots.Backend, sn *snapshots.Snapshot, now time.Time, rep *ReconcileReport) error {
	switch sn.State {
	case snapshots.StateUnavailable:
		// The listing succeeded again: it is no longer unavailable, and
		// its absence now counts.
		if err := s.k.MoveState(ctx, s.st.Pool, sn, snapshots.StateReady, ""); err != nil {
			return nil // left as it is, to the next sweep
		}
		rep.Back++
	case snapshots.StateReady:
	default:
		return nil // taking, deleting, failed, incomplete, lost: not this sweep's
	}
	if sn.MissingSince == nil {
		if err := s.st.SweepMissing(ctx, s.st.Pool, db.SweepMissingParams{ID: sn.ID, Since: now}); err != nil {
			return err
		}
		rep.Missing++
		return nil
	}
	if now.Sub(*sn.MissingSince) < snapshots.LostAfter {
		return nil
	}
	pins, err := s.k.Pins(ctx, s.st.Pool, sn.ID, "")
	if err != nil || len(pins) > 0 {
		return nil // in use by an operation: it settles it
	}
	words := lostWords(snapshots.HostWords(&snapshots.Box{Host: sn.Host}, be), now.Sub(*sn.MissingSince))
	if err := s.k.MoveState(ctx, s.st.Pool, sn, snapshots.StateLost, words); err != nil {
		return nil // left as it is, to the next sweep
	}
	rep.Lost++
	s.k.Log(ctx, s.st.Pool, sn.BoxID, snapshots.EvSnapshotLost, snapshots.System(byReconcile), logSnapshotWhyWords(sn.Name, sn.ID, words), sn.ID, "", nil)
	return nil
}
