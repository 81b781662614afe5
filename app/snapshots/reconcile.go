package snapshots

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

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
	Lost        int // records lost: missed twice, LostAfter apart
	Recorded    int // labelled snapshots of live boxes given a record again
	Kept        int // kept snapshots of gone boxes given a record as kept
	Found       int // snapshots of gone boxes listed as found
	Incomplete  int // of the above, incomplete ones
	// GuestsGone names the boxes whose guest is gone from its backend.
	GuestsGone []string
}

// Reconcile compares every backend's listing with boxsnap's records
// (section 1, "Where it lives, and how it is found again"): a record missing
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
	for _, id := range s.order {
		if err := s.reconcileBackend(ctx, s.backends[id], &rep); err != nil {
			return rep, fmt.Errorf("reconcile %s: %w", id, err)
		}
	}
	return rep, nil
}

func (s *Sweeps) unavailableWithoutBackend(ctx context.Context, rep *ReconcileReport) error {
	all, err := snapshotRows(s.st.SweepSnapshotsNotIn(ctx, s.st.Pool, s.order))
	if err != nil {
		return fmt.Errorf("reconcile: %w", err)
	}
	for _, sn := range all {
		if sn.State == StateReady {
			s.markUnavailable(ctx, sn, unavailableNotInSettingsWords(sn.BackendID))
			rep.Unavailable++
		}
	}
	return nil
}

func (s *Sweeps) markUnavailable(ctx context.Context, sn *Snapshot, words string) {
	if err := s.moveState(ctx, s.st.Pool, sn, StateUnavailable, words); err != nil {
		s.logger.Warn("mark unavailable", "snapshot", sn.ID, "err", err)
		return
	}
	s.log(ctx, s.st.Pool, sn.BoxID, EvSnapshotUnavailable, System("reconcile"),
		logSnapshotWhyWords(sn.Name, sn.ID, words), sn.ID, "", nil)
}

func (s *Sweeps) reconcileBackend(ctx context.Context, be Backend, rep *ReconcileReport) error {
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
			// A listing that fails marks nothing (section 1).
			s.logger.Warn("reconcile: listing failed; nothing marked", "backend", be.ID, "err", listErr)
			return nil
		}
	}
	records, err := snapshotRows(s.st.SweepSnapshotsOfBackend(ctx, s.st.Pool, be.ID))
	if err != nil {
		return fmt.Errorf("reconcile %s: %w", be.ID, err)
	}
	if whole {
		for _, sn := range records {
			if sn.State == StateReady {
				s.markUnavailable(ctx, sn, unavailableNoAnswerWords(be.Label, listErr))
				rep.Unavailable++
			}
		}
		return nil
	}
	rep.Listed = append(rep.Listed, be.ID)
	now := s.now()
	byID := make(map[string]providers.HeldSnapshot, len(held))
	for _, h := range held {
		if h.Label.Install == s.install && h.Label.Snapshot != "" {
			if prev, ok := byID[h.Label.Snapshot]; ok && !preferHeld(h, prev) {
				continue
			}
			byID[h.Label.Snapshot] = h
		}
	}
	known := make(map[string]bool, len(records))
	for _, sn := range records {
		known[sn.ID] = true
		if cut[sn.Host] {
			if sn.State == StateReady {
				s.markUnavailable(ctx, sn, unavailableNoAnswerWords(sn.Host, nil))
				rep.Unavailable++
			}
			continue
		}
		h, listed := byID[sn.ID]
		if listed {
			if sn.State == StateUnavailable {
				if err := s.moveState(ctx, s.st.Pool, sn, StateReady, ""); err == nil {
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
			continue
		}
		// Not listed by a listing that succeeded for its host.
		switch sn.State {
		case StateUnavailable:
			// The listing succeeded again: it is no longer unavailable, and
			// its absence now counts.
			if err := s.moveState(ctx, s.st.Pool, sn, StateReady, ""); err != nil {
				continue
			}
			rep.Back++
		case StateReady:
		default:
			continue // taking, deleting, failed, incomplete, lost: not this sweep's
		}
		if sn.MissingSince == nil {
			if err := s.st.SweepMissing(ctx, s.st.Pool, db.SweepMissingParams{ID: sn.ID, Since: now}); err != nil {
				return err
			}
			rep.Missing++
			continue
		}
		if now.Sub(*sn.MissingSince) < LostAfter {
			continue
		}
		pins, err := s.pins(ctx, s.st.Pool, sn.ID, "")
		if err != nil || len(pins) > 0 {
			continue // in use by an operation: it settles it
		}
		words := lostWords(hostWords(&Box{Host: sn.Host}, be), now.Sub(*sn.MissingSince))
		if err := s.moveState(ctx, s.st.Pool, sn, StateLost, words); err != nil {
			continue
		}
		rep.Lost++
		s.log(ctx, s.st.Pool, sn.BoxID, EvSnapshotLost, System("reconcile"), logSnapshotWhyWords(sn.Name, sn.ID, words), sn.ID, "", nil)
	}
	for _, h := range byID {
		if known[h.Label.Snapshot] {
			continue
		}
		if err := s.recordAgain(ctx, be, h, now, rep); err != nil {
			s.logger.Warn("reconcile: record again", "snapshot", h.Label.Snapshot, "err", err)
		}
	}
	return s.checkGuests(ctx, be, rep)
}

// recordAgain gives a labelled snapshot with no record its record again.
func (s *Sweeps) recordAgain(ctx context.Context, be Backend, h providers.HeldSnapshot, now time.Time, rep *ReconcileReport) error {
	if !ValidID(PrefixSnapshot, h.Label.Snapshot) || !ValidID(PrefixBox, h.Label.Box) {
		return fmt.Errorf("label %+v names no boxsnap IDs", h.Label)
	}
	// A snapshot boxsnap deleted a moment ago may still be in a listing
	// read before its delete: never bring it back.
	deleted, err := s.st.SweepWasDeleted(ctx, s.st.Pool, h.Label.Snapshot)
	if err != nil {
		return fmt.Errorf("was %s deleted: %w", h.Label.Snapshot, err)
	}
	if deleted {
		return nil
	}
	// An import published it and has not recorded it yet: the import
	// records it, resumed after a crash from its recorded step.
	if pins, err := s.pins(ctx, s.st.Pool, h.Label.Snapshot, ""); err != nil || len(pins) > 0 {
		return err
	}
	tz := s.TimeZone(ctx)
	host := h.Host
	if host == "" {
		host = h.Ref.Guest.Host
	}
	kind := h.Ref.Guest.Kind
	b, err := s.boxByID(ctx, s.st.Pool, h.Label.Box)
	gone := errors.Is(err, store.ErrNotFound) || (err == nil && b.State == BoxReleased)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	state, errWords := StateReady, ""
	if h.Incomplete {
		state, errWords = StateIncomplete, h.Error
	}
	kept := h.Label.KeptUntil != nil && h.Label.KeptUntil.After(now)
	var keptUntil *time.Time
	found := false
	owner, ownerThread := "person", (*string)(nil)
	var goneAt *time.Time
	goneHow := (*string)(nil)
	switch {
	case !gone:
		owner, ownerThread = ownerOf(b)
		if h.Label.KeptUntil != nil {
			keptUntil, owner, ownerThread = h.Label.KeptUntil, "person", nil
		}
	case kept:
		keptUntil = h.Label.KeptUntil
	default:
		found = true
	}
	if gone {
		t := now
		goneAt = &t
		how := "released"
		goneHow = &how
	}
	var fork *int
	if h.Label.ResetVersion > 0 {
		v := h.Label.ResetVersion
		fork = &v
	}
	where := h.Ref.Where
	if where == "" {
		where = "current"
	}
	var depends []string
	if h.Parent != "" {
		if p, err := s.snapshotByRef(ctx, be.ID, h.Parent); err == nil {
			depends = append(depends, p.ID)
		}
	}
	if depends == nil {
		depends = []string{}
	}
	var sn *Snapshot
	err = store.InTx(ctx, s.st.Pool, func(tx pgx.Tx) error {
		boxName, boxKind := h.Label.Box, kind
		var boxSystem string
		var boxThread *string
		if b == nil {
			// The box's record is gone too (a lost database): a released
			// box stands for it, named by its ID.
			if err := s.st.SweepGoneBoxInsert(ctx, tx, db.SweepGoneBoxInsertParams{ID: h.Label.Box, Name: h.Label.Box, Kind: kind,
				BackendID: be.ID, Host: host, GuestRef: h.Ref.Guest.Ref, ReleasedAt: &now}); err != nil {
				return err
			}
		} else {
			boxName, boxKind, boxSystem, boxThread = b.Name, b.Kind, b.System, b.ThreadID
		}
		taken, err := s.namesOfBox(ctx, tx, h.Label.Box)
		if err != nil {
			return err
		}
		name := UniqueName(DefaultName(h.TakenAt, tz), taken)
		sn, err = snapshotRow(s.st.SweepSnapshotInsert(ctx, tx, db.SweepSnapshotInsertParams{ID: h.Label.Snapshot,
			BoxID: h.Label.Box, BoxName: boxName, BoxKind: boxKind, BoxSystem: boxSystem, BoxThreadID: boxThread,
			BoxGoneAt: goneAt, BoxGoneHow: goneHow, BackendID: be.ID, Host: host, Storage: h.Storage, Guest: where,
			Name: name, TakenAt: h.TakenAt, Holds: string(orDisk(h.Holds)), OwnerKind: owner, OwnerThreadID: ownerThread,
			KeptUntil: keptUntil, Now: now, ForkSafe: fork, DependsOn: depends, Ref: h.Ref.Ref, State: state,
			Error: nilIfEmpty(errWords), Found: found}))
		return err
	})
	if errors.Is(err, store.ErrNotFound) {
		return nil // recorded meanwhile
	}
	if err != nil {
		return err
	}
	if where != "current" {
		// On a held copy or an earlier guest: the record says which guest.
		if err := s.st.HeldSetWhere(ctx, s.st.Pool, db.HeldSetWhereParams{ID: sn.ID, Guest: where, GuestRef: h.Ref.Guest.Ref}); err != nil {
			return err
		}
		sn.Guest = where
	}
	var keptAs *time.Time
	switch {
	case found:
		rep.Found++
	case gone:
		rep.Kept++
		keptAs = keptUntil
	default:
		rep.Recorded++
	}
	words := logFoundWords(sn.Name, sn.ID, host, found, keptAs, tz)
	if h.Incomplete {
		rep.Incomplete++
		words = logIncompleteToo(words, h.Error)
	}
	s.log(ctx, s.st.Pool, sn.BoxID, EvSnapshotFound, System("reconcile"), words, sn.ID, "", nil)
	return nil
}

func orDisk(h providers.Holds) providers.Holds {
	if h == "" {
		return providers.HoldsDisk
	}
	return h
}
