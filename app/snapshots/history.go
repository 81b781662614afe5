package snapshots

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/boxsnap/boxsnap/app/store"
	"github.com/boxsnap/boxsnap/app/store/db"
	"github.com/boxsnap/boxsnap/providers"
)

// Numbers of automatic history, each said once here.
const (
	// DefaultHistoryDays is how long automatic snapshots are kept, one a
	// day at the end (moatbox's Solo plan: 7 days); MaxHistoryDays bounds
	// the setting.
	DefaultHistoryDays, MaxHistoryDays = 7, 365
	// DefaultHistoryGiB is the held data past which thinning drops the
	// oldest automatic snapshot (moatbox: 100 GiB); MaxHistoryGiB bounds it.
	DefaultHistoryGiB, MaxHistoryGiB = 100, 100000
	// ThinAllFor, ThinMinutelyFor and ThinHourlyFor are the tiers: every
	// snapshot of the last 10 minutes, one a minute for the last hour, one
	// an hour for the last day, then one a day.
	ThinAllFor      = 10 * time.Minute
	ThinMinutelyFor = time.Hour
	ThinHourlyFor   = 24 * time.Hour
	// MinCheckSeconds and MaxCheckSeconds bound a backend's check cadence.
	MinCheckSeconds, MaxCheckSeconds = 15, 86400
)

// AutomaticByDefault says whether automatic snapshots are on for a kind of
// backend that the settings do not name: on for the local backend, whose
// change journal makes a check free, and for Docker, whose record of each
// box's last take answers unchanged without a take; off elsewhere, where a
// backend that cannot tell whether a box changed takes one at every check.
func AutomaticByDefault(backendKind string) bool {
	return backendKind == "local" || backendKind == "docker"
}

func (st Settings) validateHistory() []error {
	var errs []error
	if st.HistoryDays < 1 || st.HistoryDays > MaxHistoryDays {
		errs = append(errs, errors.New(historyDaysWords(MaxHistoryDays)))
	}
	if st.HistoryGiB < 1 || st.HistoryGiB > MaxHistoryGiB {
		errs = append(errs, errors.New(HistoryGiBWords(MaxHistoryGiB)))
	}
	for id, n := range st.CheckSeconds {
		if n < MinCheckSeconds || n > MaxCheckSeconds {
			errs = append(errs, errors.New(checkSecondsWords(id, MinCheckSeconds, MaxCheckSeconds)))
		}
	}
	return errs
}

// AutomaticOn says whether automatic snapshots are on for a backend, by
// the settings or its default.
func (st Settings) AutomaticOn(be Backend) bool {
	if on, ok := st.Automatic[be.ID]; ok {
		return on
	}
	return AutomaticByDefault(be.Kind)
}

// OwnCadence is a backend's own cadence for the automatic check, with its
// reason, as the backend gives it.
func (s *Service) OwnCadence(be Backend) providers.Cadence { return be.Snap.ChangeCadence() }

// CheckEvery is how often a backend's running boxes are checked.
func (st Settings) CheckEvery(be Backend) time.Duration {
	if n, ok := st.CheckSeconds[be.ID]; ok && n > 0 {
		return time.Duration(n) * time.Second
	}
	return be.Snap.ChangeCadence().Every
}

// BoxHistory is a box's history settings, its own and in effect.
type BoxHistory struct {
	// Automatic is the box's own choice, or nil: its backend's.
	Automatic *bool `json:"automatic"`
	// MaxGiB is the box's own size bound, or nil: the setting's.
	MaxGiB *int64 `json:"maxGiB"`
	// On and LimitGiB are what is in effect.
	On       bool  `json:"on"`
	LimitGiB int64 `json:"limitGiB"`
	// Every is how often the box is checked while it runs, in seconds.
	Every int `json:"checkSeconds"`
	// Automatic snapshots the box holds now.
	Count int `json:"automaticCount"`
}

// Save makes an automatic snapshot an ordinary one, with a new name if
// given (moatbox's "Save with a name"): it then counts in the per-box limit
// and thinning leaves it. The caller must be able to take a snapshot of the
// box; a box at its limit refuses, naming what to delete.
func (s *Service) Save(ctx context.Context, c Caller, boxRef, ref, name string) (*Snapshot, error) {
	var newName *string
	if strings.TrimSpace(name) != "" {
		n, err := CleanName(name)
		if err != nil {
			return nil, err
		}
		newName = &n
	}
	sn, b, err := s.SnapshotOfBox(ctx, c, boxRef, ref)
	if err != nil {
		return nil, err
	}
	if err := MayAct(c, ActTake, b, nil); err != nil {
		return nil, err
	}
	st, err := s.Settings(ctx)
	if err != nil {
		return nil, err
	}
	err = store.InTx(ctx, s.st.Pool, func(tx pgx.Tx) error {
		b, sn, err = s.ChangeNow(ctx, tx, b.ID, sn.ID, ref, ChangeRename)
		if err != nil {
			return err
		}
		if !sn.Automatic {
			return refusal(CodeConflict, SavedAlreadyWords(sn.Name))
		}
		if newName != nil && *newName != sn.Name {
			taken, err := s.NamesOfBox(ctx, tx, sn.BoxID)
			if err != nil {
				return err
			}
			if taken[*newName] {
				return refusal(CodeConflict, NamedAlreadyWords(sn.BoxName, *newName))
			}
		}
		all, err := s.SnapshotsOfBox(ctx, tx, b.ID)
		if err != nil {
			return err
		}
		if count := CountTowardLimit(all); count >= st.PerBox {
			var names []string
			hidden := 0
			for _, o := range all {
				if o.IsUndo() || o.Automatic || o.State == StateFailed || o.State == StateDeleting {
					continue
				}
				if MayAct(c, ActSee, b, o) == nil {
					names = append(names, "‘"+o.Name+"’")
				} else {
					hidden++
				}
			}
			return refusal(CodeLimit, savingPassesWords(b.Name, count, st.PerBox, sn.Name, DeleteWords(names, hidden)))
		}
		if err := s.st.HistorySetAutomatic(ctx, tx, db.HistorySetAutomaticParams{ID: sn.ID, Automatic: false, NewName: newName}); err != nil {
			return fmt.Errorf("save %s: %w", sn.ID, err)
		}
		shown := sn.Name
		if newName != nil {
			shown = *newName
		}
		s.Log(ctx, tx, b.ID, EvSnapshotSaved, c, logSavedWords(shown, sn.ID), sn.ID, "", nil)
		return nil
	})
	if err != nil {
		return nil, err
	}
	sn, _, err = s.Snapshot(ctx, c, sn.ID)
	return sn, err
}

// Unsave makes a saved snapshot automatic again: from then on thinning
// treats it as any other automatic one. An undo stays an undo, and a kept
// one stays kept (and so spared) until its keep ends.
func (s *Service) Unsave(ctx context.Context, c Caller, boxRef, ref string) (*Snapshot, error) {
	sn, b, err := s.SnapshotOfBox(ctx, c, boxRef, ref)
	if err != nil {
		return nil, err
	}
	if err := MayAct(c, ActDelete, b, sn); err != nil {
		return nil, err
	}
	err = store.InTx(ctx, s.st.Pool, func(tx pgx.Tx) error {
		b, sn, err = s.ChangeNow(ctx, tx, b.ID, sn.ID, ref, ChangeRename)
		if err != nil {
			return err
		}
		if sn.Automatic {
			return refusal(CodeConflict, AutomaticAlreadyWords(sn.Name))
		}
		if sn.UndoOf != nil {
			return refusal(CodeConflict, undoNeverAutomaticWords(sn.Name))
		}
		if err := s.st.HistorySetAutomatic(ctx, tx, db.HistorySetAutomaticParams{ID: sn.ID, Automatic: true}); err != nil {
			return fmt.Errorf("unsave %s: %w", sn.ID, err)
		}
		s.Log(ctx, tx, b.ID, EvSnapshotUnsaved, c, logSavedWords(sn.Name, sn.ID), sn.ID, "", nil)
		return nil
	})
	if err != nil {
		return nil, err
	}
	sn, _, err = s.Snapshot(ctx, c, sn.ID)
	return sn, err
}

// DeleteHistory deletes every automatic snapshot of a box once the person
// typed the box's name (moatbox's "Delete history"): saved and kept ones
// stay, and so does one an operation uses. It admits one operation that
// deletes them one by one; with none to delete it answers nil.
func (s *Service) DeleteHistory(ctx context.Context, c Caller, boxRef, confirm, requestID string) (*Operation, error) {
	if !c.IsPerson() {
		return nil, refusal(CodeForbidden, onlyPersonDeletesHistoryWords)
	}
	if op, err := s.Repeated(ctx, c, requestID, OpDeleteHistory, boxRef, ""); err != nil || op != nil {
		return op, err
	}
	b, err := s.Box(ctx, c, boxRef)
	if err != nil {
		return nil, err
	}
	if confirm != b.Name {
		return nil, refusal(CodeInvalid, DeleteHistoryWords(b.Name))
	}
	if op, err := s.ExistingRequest(ctx, s.st.Pool, c, requestID, OpDeleteHistory, nil); err != nil || op != nil {
		return op, err
	}
	return s.AdmitThin(ctx, c, b, OpDeleteHistory, ChangeDelete, requestID, func(all []*Snapshot, pins map[string][]Pin, _ *string) []string {
		var ids []string
		for _, sn := range all {
			if sn.Automatic && Eligible(sn, ChangeDelete, pins[sn.ID], s.now(), time.UTC) == nil && !sn.Kept() {
				ids = append(ids, sn.ID)
			}
		}
		return ids
	})
}

// ThinParams are a thinning's or a Delete history's parameters.
type ThinParams struct {
	Change Change `json:"change"`
}

// AdmitThin admits one operation of kind that deletes the snapshots choose
// picks from the box's, with the box's row locked and each one's pins read;
// none picked admits nothing (nil).
func (s *Admission) AdmitThin(ctx context.Context, c Caller, b *Box, kind string, change Change, requestID string,
	choose func(all []*Snapshot, pins map[string][]Pin, head *string) []string) (*Operation, error) {
	var op *Operation
	err := store.InTx(ctx, s.st.Pool, func(tx pgx.Tx) error {
		b, err := s.LockBox(ctx, tx, b.ID)
		if err != nil {
			return err
		}
		all, err := s.SnapshotsOfBox(ctx, tx, b.ID)
		if err != nil {
			return err
		}
		pins, err := s.AllPins(ctx, tx)
		if err != nil {
			return err
		}
		ids := choose(all, pins, b.HeadID)
		if len(ids) == 0 {
			return nil
		}
		op, err = s.Admit(ctx, tx, OpRequest{Kind: kind, Box: b, Pins: ids, Caller: c, RequestID: requestID,
			Params: ThinParams{Change: change}})
		return err
	})
	if err != nil {
		return nil, err
	}
	return op, nil
}

// Box log event kinds of automatic history.
const (
	EvSnapshotSaved   = "snapshot-saved"
	EvSnapshotUnsaved = "snapshot-unsaved"
	EvHistorySettings = "history-settings"
	EvHistoryThinned  = "history-thinned"
	EvHistoryDeleted  = "history-deleted"
)

// Operation kinds of automatic history: thinning's deletes, and the
// person's Delete history.
const (
	OpThin          = "thin"
	OpDeleteHistory = "delete-history"
)
