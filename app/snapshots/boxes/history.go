package boxes

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/store/db"
	"github.com/jackc/pgx/v5"
)

// BoxHistorySettings reads a box's history settings as the caller may see
// the box.
func (s *HistorySettings) BoxHistorySettings(ctx context.Context, c snapshots.Caller, ref string) (*snapshots.BoxHistory, error) {
	b, err := s.k.Box(ctx, c, ref)
	if err != nil {
		return nil, err
	}
	return s.BoxHistory(ctx, b)
}

// BoxHistory is a box's history settings, read for the box b already read.
func (s *HistorySettings) BoxHistory(ctx context.Context, b *snapshots.Box) (*snapshots.BoxHistory, error) {
	st, err := s.k.Settings(ctx)
	if err != nil {
		return nil, err
	}
	out := &snapshots.BoxHistory{LimitGiB: int64(st.HistoryGiB)}
	row, err := s.st.HistorySettingsOf(ctx, s.st.Pool, b.ID)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("read %s's history settings: %w", b.Name, err)
	}
	out.Automatic = row.Automatic
	maxBytes := row.MaxBytes
	if maxBytes != nil {
		g := *maxBytes >> 30
		out.MaxGiB, out.LimitGiB = &g, g
	}
	if be, err := s.k.Backend(b.BackendID); err == nil {
		out.On = st.AutomaticOn(be)
		out.Every = int(st.CheckEvery(be) / time.Second)
	}
	if out.Automatic != nil {
		out.On = *out.Automatic
	}
	all, err := s.k.SnapshotsOfBox(ctx, s.st.Pool, b.ID)
	if err != nil {
		return nil, err
	}
	for _, sn := range all {
		if sn.Automatic && sn.State != snapshots.StateDeleting {
			out.Count++
		}
	}
	return out, nil
}

// SetBoxHistory sets a box's own history settings: the person only.
// automatic nil follows the backend; maxGiB nil follows the setting.
func (s *HistorySettings) SetBoxHistory(ctx context.Context, c snapshots.Caller, ref string, automatic *bool, maxGiB *int64) (*snapshots.BoxHistory, error) {
	if !c.IsPerson() {
		return nil, &snapshots.Refusal{Code: snapshots.CodeForbidden, Words: onlyPersonHistoryWords}
	}
	b, err := s.k.Box(ctx, c, ref)
	if err != nil {
		return nil, err
	}
	var maxBytes *int64
	if maxGiB != nil {
		if *maxGiB < 1 || *maxGiB > snapshots.MaxHistoryGiB {
			return nil, &snapshots.Refusal{Code: snapshots.CodeInvalid, Words: snapshots.HistoryGiBWords(snapshots.MaxHistoryGiB)}
		}
		n := *maxGiB << 30
		maxBytes = &n
	}
	if err := s.st.HistorySetSettings(ctx, s.st.Pool, db.HistorySetSettingsParams{BoxID: b.ID, Automatic: automatic, MaxBytes: maxBytes}); err != nil {
		return nil, fmt.Errorf("save %s's history settings: %w", b.Name, err)
	}
	s.k.Log(ctx, s.st.Pool, b.ID, snapshots.EvHistorySettings, c, LogHistorySettingsWords(automatic), "", "", nil)
	return s.BoxHistory(ctx, b)
}
