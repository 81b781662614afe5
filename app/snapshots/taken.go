package snapshots

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/boxsnap/boxsnap/app/store/db"
	"github.com/boxsnap/boxsnap/providers"
)

// OwnerOf says who owns a box's new snapshots: the box's thread, or the
// person for one of their machines.
func OwnerOf(b *Box) (string, *string) {
	if b.ThreadID == nil {
		return "person", nil
	}
	t := *b.ThreadID
	return "thread", &t
}

// PlanError turns a backend's failure to plan into words.
func (s *Service) PlanError(b *Box, be Backend, err error) error {
	var locked *providers.LockedError
	var refused *providers.RefusedError
	switch {
	case errors.As(err, &locked):
		return &Refusal{Code: CodeLocked, TryAgain: locked.Lock.Lock == "backup",
			Words: LockedWords(be.Label, b.Name, locked.Lock.Lock, locked.Lock.Fix)}
	case errors.As(err, &refused):
		return &Refusal{Code: CodePlan, Words: refused.Why, TryAgain: refused.TryAgain}
	case errors.Is(err, providers.ErrUnreachable):
		return &Refusal{Code: CodeUnreachable, TryAgain: true,
			Words: noAnswerWords(HostWords(b, be), b.Name)}
	case errors.Is(err, providers.ErrNotFound):
		return &Refusal{Code: CodePlan,
			Words: guestGoneWords(b.Name, be.Label)}
	}
	return fmt.Errorf("plan %s: %w", b.Name, err)
}

// HostWords names where a box lives: its host, else its backend's label.
func HostWords(b *Box, be Backend) string {
	if b.Host != "" {
		return b.Host
	}
	return be.Label
}

// RoomFor refuses what would take a storage past the room setting, or thin
// metadata past 5 points below it.
func (s *Service) RoomFor(ctx context.Context, c Caller, b *Box, be Backend, plan providers.SnapshotPlan, st Settings, adds *int64) error {
	full := plan.Storage.PercentFull
	if adds != nil && plan.Storage.FreeBytes > 0 && full < 100 {
		total := float64(plan.Storage.FreeBytes) / (1 - full/100)
		full += float64(*adds) / total * 100
	}
	where := HostWords(b, be)
	if full > float64(st.RoomPercent) {
		return &Refusal{Code: CodeRoom, TryAgain: true,
			Words: storageFullWords(where, full, st.RoomPercent, s.freeableWords(ctx, c, b))}
	}
	if m := plan.Storage.MetadataPercentFull; m != nil && *m > float64(st.RoomPercent-MetadataBelowRoom) {
		return &Refusal{Code: CodeRoom, TryAgain: true,
			Words: metadataFullWords(where, *m, st.RoomPercent-MetadataBelowRoom, s.freeableWords(ctx, c, b))}
	}
	return nil
}

// freeableWords names the snapshots on the box's host whose deletion would
// free room, only those the caller may see, and "and others you cannot see"
// for the rest.
func (s *Service) freeableWords(ctx context.Context, c Caller, b *Box) string {
	all, err := SnapshotRows(s.st.CoreSnapshotsAll(ctx, s.st.Pool))
	if err != nil {
		s.logger.Warn("the snapshots a delete would free room of", "err", err)
		return ""
	}
	var names []string
	hidden := 0
	for _, sn := range all {
		if sn.BackendID != b.BackendID || sn.Host != b.Host || sn.State != StateReady {
			continue
		}
		box, err := s.BoxByID(ctx, s.st.Pool, sn.BoxID)
		if err != nil {
			continue
		}
		if MayAct(c, ActSee, box, sn) == nil {
			names = append(names, fmt.Sprintf("‘%s’ of %s", sn.Name, sn.BoxName))
		} else {
			hidden++
		}
	}
	return DeleteWords(names, hidden)
}

// CountTowardLimit counts a box's snapshots against the limit: undos and
// automatic ones apart, kept ones counted, failed and deleting ones not (they
// are replaced, never refused).
func CountTowardLimit(all []*Snapshot) int {
	n := 0
	for _, sn := range all {
		if sn.IsUndo() || sn.Automatic || sn.State == StateFailed || sn.State == StateDeleting || sn.Guest != "current" {
			continue
		}
		n++
	}
	return n
}

// TakenEvent is the box log's event of a take, written with its record.
type TakenEvent struct {
	Caller Caller
	Words  string
	Op     string
}

// MarkTaken records what the backend answered for a take, in one statement
// (PerfSnapshotTaken): the record made ready, the box log's event of the
// take (ev; nil writes none), and the box's head moved on. The event goes
// with the record: a worker killed between the two left a ready snapshot
// whose take the log never told, and the resumed take, finding it ready,
// did not tell it either.
func (s *Service) MarkTaken(ctx context.Context, sn *Snapshot, t providers.SnapshotTaken, took time.Duration, ev *TakenEvent) error {
	n, err := s.st.PerfSnapshotTaken(ctx, s.st.Pool, TakenParams(sn, t, took, ev, s.now()))
	if err != nil {
		return fmt.Errorf("record take of %s: %w", sn.ID, err)
	}
	if n == 0 {
		return fmt.Errorf("record take of %s: it is no longer taking", sn.ID)
	}
	return nil
}

// TakenParams are what MarkTaken records; now is the capture's time when
// the backend gave none.
func TakenParams(sn *Snapshot, t providers.SnapshotTaken, took time.Duration, ev *TakenEvent, now time.Time) db.PerfSnapshotTakenParams {
	var size *int64
	var meaning *string
	if t.Size != nil {
		size, meaning = &t.Size.Bytes, &t.Size.Meaning
	}
	var fork *int
	if t.ResetVersion > 0 {
		v := t.ResetVersion
		fork = &v
	}
	captured := t.CapturedAt
	if captured.IsZero() {
		captured = now
	}
	holds := string(t.Holds)
	if holds == "" {
		holds = sn.Holds
	}
	tookMs, pausedMs := int(took.Milliseconds()), int(t.Paused.Milliseconds())
	arg := db.PerfSnapshotTakenParams{ID: sn.ID, BoxID: sn.BoxID, BackendID: sn.BackendID, ParentRef: NilIfEmpty(t.Parent), Ref: t.Ref,
		Storage: NilIfEmpty(t.Storage), CapturedAt: &captured, TookMs: &tookMs, PausedMs: &pausedMs, Holds: holds, SizeBytes: size,
		SizeMeaning: meaning, ForkSafe: fork, Excludes: NilIfEmpty(t.Excludes)}
	if ev != nil {
		kind := EvSnapshotTaken
		arg.LogKind, arg.ActorKind, arg.ActorThread, arg.ActorWhy = &kind, ev.Caller.ByKind(), ev.Caller.thread(), NilIfEmpty(ev.Caller.Why)
		arg.Words, arg.OperationID = ev.Words, NilIfEmpty(ev.Op)
	}
	return arg
}

// PictureKeeper captures and keeps pictures of a box's screen for the
// restore: its undo's from before its stop, held with the operation until
// the undo is taken (a take's own picture is package take's). Package
// pictures' Pictures is one (UsePictures); a picture that fails or is late
// never fails or slows the operation.
type PictureKeeper interface {
	// Capturing says whether a picture taker is given: without one, no box
	// gets a picture.
	Capturing() bool
	HoldUndoPicture(ctx context.Context, op *Operation, b *Box)
	KeepUndoPicture(ctx context.Context, op *Operation, undo *Snapshot)
}

// UsePictures gives the restore what captures and keeps its undo's
// pictures; without it, no undo gets a picture.
func (s *Kernel) UsePictures(p PictureKeeper) { s.pictures = p }
