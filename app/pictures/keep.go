package pictures

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/store"
	"github.com/boxsnap/boxsnap/app/store/db"
)

// Pictures is the snapshots' pictures of a box's screen: a snapshot's
// picture read, the picture taker given, a take's picture captured and
// kept, and a restore's undo picture captured before its stop, held with
// the operation and kept once the undo is taken. The core's restore calls
// it as its snapshots.PictureKeeper, and the take (package take) for its
// picture.
type Pictures struct {
	k      kernel
	st     *store.Store
	taker  PictureTaker
	now    func() time.Time
	logger *slog.Logger
}

// kernel is what pictures need of the snapshot core: a snapshot as a
// caller may see it. *snapshots.Service is one.
type kernel interface {
	Snapshot(ctx context.Context, c snapshots.Caller, id string) (*snapshots.Snapshot, *snapshots.Box, error)
}

// KeepOptions configure the pictures kept: the store they are kept in,
// the clock (nil is time.Now) and the logger (nil discards).
type KeepOptions struct {
	Store  *store.Store
	Now    func() time.Time
	Logger *slog.Logger
}

// NewPictures makes the snapshots' pictures on the core k; the take and the
// restore capture with it once given it (take.Take.UsePictures,
// snapshots.Kernel.UsePictures),
// and nothing is captured until it is given a taker (Use).
func NewPictures(k kernel, opts KeepOptions) (*Pictures, error) {
	if k == nil || opts.Store == nil {
		return nil, errors.New("pictures: the core and a store are required")
	}
	s := &Pictures{k: k, st: opts.Store, now: opts.Now, logger: opts.Logger}
	if s.now == nil {
		s.now = time.Now
	}
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	return s, nil
}

// Picture is a snapshot's picture of the screen.
type Picture struct {
	JPEG   []byte
	Width  int
	Height int
}

// Get returns a snapshot's picture through mayAct: the person, and the
// agent of the thread that owns it (never a kept one's). A snapshot with no
// picture, or one the caller may not see, reads as not found.
func (s *Pictures) Get(ctx context.Context, c snapshots.Caller, id string) (*Picture, error) {
	sn, b, err := s.k.Snapshot(ctx, c, id)
	if err != nil {
		return nil, err
	}
	if err := snapshots.MayAct(c, snapshots.ActPicture, b, sn); err != nil {
		return nil, err
	}
	r, err := s.st.CorePictureGet(ctx, s.st.Pool, sn.ID)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, refusal(snapshots.CodeNotFound, noPictureWords(sn.Name))
	}
	if err != nil {
		return nil, fmt.Errorf("read picture: %w", err)
	}
	return &Picture{JPEG: r.JPEG, Width: r.Width, Height: r.Height}, nil
}

// PictureTaker captures a box's screen for a snapshot's picture: a JPEG
// 320 px wide, quality 70. It is given snapshots.PictureWait at most; a
// picture that fails or is late never fails or slows the take. Taker is
// one.
type PictureTaker interface {
	Capture(ctx context.Context, b *snapshots.Box) (jpeg []byte, width, height int, err error)
}

// Use gives the pictures their taker; without one, boxes with a screen get
// no picture. It is given before the core's operations run.
func (s *Pictures) Use(p PictureTaker) { s.taker = p }

// Capturing says whether a picture taker is given.
func (s *Pictures) Capturing() bool { return s.taker != nil }

// TakePicture captures and keeps a snapshot's picture, just before the
// take, within snapshots.PictureWait, and caps all pictures at
// snapshots.PicturesCapBytes, oldest unkept first.
func (s *Pictures) TakePicture(ctx context.Context, b *snapshots.Box, sn *snapshots.Snapshot) {
	if s.taker == nil || !b.HasScreen || sn.Picture == "off" {
		return
	}
	p, err := s.capturePicture(ctx, b)
	s.keepPicture(ctx, sn, p, err)
}

// capturePicture captures a box's screen within snapshots.PictureWait. A
// restore captures it before the stop, for its undo.
func (s *Pictures) capturePicture(ctx context.Context, b *snapshots.Box) (*Picture, error) {
	pctx, cancel := context.WithTimeout(ctx, snapshots.PictureWait)
	defer cancel()
	jpeg, w, h, err := s.taker.Capture(pctx, b)
	if err == nil && pctx.Err() != nil {
		err = pctx.Err()
	}
	if err != nil {
		return nil, err
	}
	return &Picture{JPEG: jpeg, Width: w, Height: h}, nil
}

// HoldUndoPicture captures a restore's undo picture as the restore starts,
// before its stop, and holds it with the operation until the undo is taken
// (KeepUndoPicture): the job may snooze on provider tasks in between, and a
// snooze keeps nothing in memory. A restore resumed at its
// start keeps the picture its first run held.
func (s *Pictures) HoldUndoPicture(ctx context.Context, op *snapshots.Operation, b *snapshots.Box) {
	if _, err := s.st.RestorePictureHeld(ctx, s.st.Pool, op.ID); err == nil {
		return
	}
	arg := db.RestorePictureHoldParams{OperationID: op.ID, TakenAt: s.now()}
	if p, err := s.capturePicture(ctx, b); err != nil {
		why := err.Error()
		arg.Failed = &why
	} else {
		arg.JPEG, arg.Width, arg.Height = p.JPEG, p.Width, p.Height
	}
	if err := s.st.RestorePictureHold(ctx, s.st.Pool, arg); err != nil {
		s.logger.Warn("hold the undo's picture", "operation", op.ID, "err", err)
	}
}

// KeepUndoPicture keeps the picture held for a restore (HoldUndoPicture) as
// its undo's, or records why there is none, and lets the held one go.
func (s *Pictures) KeepUndoPicture(ctx context.Context, op *snapshots.Operation, undo *snapshots.Snapshot) {
	held, err := s.st.RestorePictureHeld(ctx, s.st.Pool, op.ID)
	if errors.Is(err, pgx.ErrNoRows) {
		return // kept by an earlier run of this step
	}
	if err != nil {
		s.logger.Warn("read the undo's held picture", "operation", op.ID, "err", err)
		return
	}
	var p *Picture
	var capErr error
	if held.Failed != nil {
		capErr = errors.New(*held.Failed)
	} else {
		p = &Picture{JPEG: held.JPEG, Width: held.Width, Height: held.Height}
	}
	s.keepPicture(ctx, undo, p, capErr)
	if err := s.st.RestorePictureDrop(ctx, s.st.Pool, op.ID); err != nil {
		s.logger.Warn("let the undo's held picture go", "operation", op.ID, "err", err)
	}
}

// keepPicture keeps a captured picture as sn's, or records that it failed
// (capErr), and caps all pictures at snapshots.PicturesCapBytes, oldest
// unkept first.
func (s *Pictures) keepPicture(ctx context.Context, sn *snapshots.Snapshot, p *Picture, capErr error) {
	state := "taken"
	err := capErr
	if err == nil {
		err = s.st.CorePictureInsert(ctx, s.st.Pool, db.CorePictureInsertParams{SnapshotID: sn.ID, JPEG: p.JPEG, Width: p.Width,
			Height: p.Height, TakenAt: s.now(), Bytes: len(p.JPEG)})
	}
	if err != nil {
		state = "failed"
		s.logger.Info("no picture for this snapshot", "snapshot", sn.ID, "why", err.Error())
	}
	if err := s.st.CorePictureState(ctx, s.st.Pool, db.CorePictureStateParams{ID: sn.ID, Picture: state}); err != nil {
		s.logger.Warn("picture state", "snapshot", sn.ID, "err", err)
	}
	if err := s.st.CorePicturesPrune(ctx, s.st.Pool, snapshots.PicturesCapBytes); err != nil {
		s.logger.Warn("prune pictures", "err", err)
	}
}
