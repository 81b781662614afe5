package snapshots

import (
	"context"
	"errors"
	"fmt"

	"github.com/boxsnap/boxsnap/app/store/db"
	"github.com/jackc/pgx/v5"
)

// Picture is a snapshot's picture of the screen (section 10).
type Picture struct {
	JPEG   []byte
	Width  int
	Height int
}

// Get returns a snapshot's picture through mayAct: the person, and the
// agent of the thread that owns it (never a kept one's). A snapshot with no
// picture, or one the caller may not see, reads as not found.
func (s *Pictures) Get(ctx context.Context, c Caller, id string) (*Picture, error) {
	sn, b, err := s.snaps.Snapshot(ctx, c, id)
	if err != nil {
		return nil, err
	}
	if err := MayAct(c, ActPicture, b, sn); err != nil {
		return nil, err
	}
	r, err := s.st.CorePictureGet(ctx, s.st.Pool, sn.ID)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, refusal(CodeNotFound, wordsNoPicture(sn.Name))
	}
	if err != nil {
		return nil, fmt.Errorf("read picture: %w", err)
	}
	return &Picture{JPEG: r.JPEG, Width: r.Width, Height: r.Height}, nil
}

// PictureTaker captures a box's screen for a snapshot's picture (section
// 10): a JPEG 320 px wide, quality 70. The core gives it PictureWait at most;
// a picture that fails or is late never fails or slows the take.
type PictureTaker interface {
	Capture(ctx context.Context, b *Box) (jpeg []byte, width, height int, err error)
}

// Use gives the core its picture taker; without one, boxes with a
// screen get no picture.
func (s *Pictures) Use(p PictureTaker) { s.pictureTaker = p }

// takePicture captures and keeps a snapshot's picture, just before the take,
// within PictureWait, and caps all pictures at PicturesCapBytes, oldest
// unkept first.
func (s *Pictures) takePicture(ctx context.Context, b *Box, sn *Snapshot) {
	if s.pictureTaker == nil || !b.HasScreen || sn.Picture == "off" {
		return
	}
	p, err := s.capturePicture(ctx, b)
	s.keepPicture(ctx, sn, p, err)
}

// capturePicture captures a box's screen within PictureWait. A restore
// captures it before the stop, for its undo (section 10).
func (s *Pictures) capturePicture(ctx context.Context, b *Box) (*Picture, error) {
	pctx, cancel := context.WithTimeout(ctx, PictureWait)
	defer cancel()
	jpeg, w, h, err := s.pictureTaker.Capture(pctx, b)
	if err == nil && pctx.Err() != nil {
		err = pctx.Err()
	}
	if err != nil {
		return nil, err
	}
	return &Picture{JPEG: jpeg, Width: w, Height: h}, nil
}

// holdUndoPicture captures a restore's undo picture as the restore starts,
// before its stop (section 10), and holds it with the operation until the
// undo is taken (keepUndoPicture): the job may snooze on provider tasks in
// between, and a snooze keeps nothing in memory. A restore resumed at its
// start keeps the picture its first run held.
func (s *Pictures) holdUndoPicture(ctx context.Context, op *Operation, b *Box) {
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

// keepUndoPicture keeps the picture held for a restore (holdUndoPicture) as
// its undo's, or records why there is none, and lets the held one go.
func (s *Pictures) keepUndoPicture(ctx context.Context, op *Operation, undo *Snapshot) {
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
// (capErr), and caps all pictures at PicturesCapBytes, oldest unkept first.
func (s *Pictures) keepPicture(ctx context.Context, sn *Snapshot, p *Picture, capErr error) {
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
	if err := s.st.CorePicturesPrune(ctx, s.st.Pool, PicturesCapBytes); err != nil {
		s.logger.Warn("prune pictures", "err", err)
	}
}
