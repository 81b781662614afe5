package snapshots

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/boxsnap/boxsnap/app/store"
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
