package snapshots

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/boxsnap/boxsnap/app/store"
	"github.com/boxsnap/boxsnap/app/store/db"
)

// The trash: a release takes a final snapshot where the box's backend can,
// stops the box, makes its guest inert where its backend needs it
// (providers.Trasher), and keeps it with its snapshots for TrashHours. The
// person restores it from the trash or empties it; after the window the trash
// sweep empties it, which is the release as it was before the trash: unkept
// snapshots deleted, kept ones held, the guest released.

// The trash's numbers.
const (
	// DefaultTrashHours is how long a released box stays in the trash
	// (moatbox: 72 hours).
	DefaultTrashHours = 72
	// MaxTrashHours is the longest the setting allows: 30 days.
	MaxTrashHours = 720
)

// The trash's operation, steps and box log events.
const (
	// OpUntrash restores a box from the trash.
	OpUntrash = "untrash"
	// StepFinal takes the final snapshot of a release into the trash.
	StepFinal = "final"
	// StepInert stops the box and makes its guest inert (or, restoring from
	// the trash, gives back what was set aside and starts it).
	StepInert = "inert"
	EvTrashed = "trashed"
	// EvUntrashed is a box restored from the trash.
	EvUntrashed = "restored-from-trash"
)

// TrashEntry is one box in the trash.
type TrashEntry struct {
	Box       *Box      `json:"box"`
	TrashedAt time.Time `json:"trashedAt"`
	Until     time.Time `json:"until"`
	// Final is the snapshot taken at the release, or nil with FinalWords
	// saying why there is none.
	Final      *string `json:"finalSnapshot,omitempty"`
	FinalName  string  `json:"finalName,omitempty"`
	FinalWords string  `json:"finalWords,omitempty"`
	WasRunning bool    `json:"wasRunning"`
	ByKind     string  `json:"by"`
	// Costs says what the box costs while it waits, on its backend.
	Costs string `json:"costs"`
}

// trashRow is a box_trash row.
type TrashRow = db.BoxTrash

func (s *Records) TrashRow(ctx context.Context, q db.DBTX, boxID string) (*TrashRow, error) {
	r, err := s.st.TrashByBox(ctx, q, boxID)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, store.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("read the trash: %w", err)
	}
	return &r, nil
}
