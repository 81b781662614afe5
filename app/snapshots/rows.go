package snapshots

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/boxsnap/boxsnap/app/operations"
	"github.com/boxsnap/boxsnap/app/store"
	"github.com/boxsnap/boxsnap/app/store/db"
)

// The records read through sqlc's typed queries (app/store/db) become the
// core's types here, one function per record (an operation through
// operations.FromRow, whose type also carries a run's state). Snapshot and
// Thread have their table's columns in the table's order with the same Go
// types, so a row converts to them as it is: a column a migration adds is a
// compile error here until the type has it too, in the same place. A box's
// row differs (its presence is JSON the core reads as Presence), so it is
// decoded, and a presence that does not decode is an error, not an empty one.

// SnapshotRow is the snapshot a :one query read or wrote: no row is
// store.ErrNotFound, and an insert whose name the box already has is the
// refusal a person reads.
func SnapshotRow(r db.Snapshot, err error) (*Snapshot, error) {
	var pgErr *pgconn.PgError
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return nil, store.ErrNotFound
	case errors.As(err, &pgErr) && pgErr.Code == "23505":
		return nil, refusal(CodeConflict, NameTakenWords)
	case err != nil:
		return nil, err
	}
	sn := Snapshot(r)
	return &sn, nil
}

// SnapshotRows is the snapshots a :many query read.
func SnapshotRows(rs []db.Snapshot, err error) ([]*Snapshot, error) {
	if err != nil {
		return nil, err
	}
	out := make([]*Snapshot, len(rs))
	for i := range rs {
		sn := Snapshot(rs[i])
		out[i] = &sn
	}
	return out, nil
}

// operationRow is the operation a :one query read or wrote; no row is
// store.ErrNotFound.
func OperationRow(r db.Operation, err error) (*Operation, error) {
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, store.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	return operations.FromRow(r), nil
}

// operationRows is the operations a :many query read.
func operationRows(rs []db.Operation, err error) ([]*Operation, error) {
	if err != nil {
		return nil, err
	}
	out := make([]*Operation, len(rs))
	for i := range rs {
		out[i] = operations.FromRow(rs[i])
	}
	return out, nil
}

// boxOf is the box of a row of boxes, its presence decoded.
func boxOf(r db.Box) (*Box, error) {
	b := &Box{ID: r.ID, Name: r.Name, Kind: r.Kind, System: r.System, ThreadID: r.ThreadID, BackendID: r.BackendID,
		Host: r.Host, GuestRef: r.GuestRef, Generation: r.Generation, HasScreen: r.HasScreen, ScreenURL: r.ScreenURL,
		ForkedFrom: r.ForkedFrom, State: BoxState(r.State), CreatedAt: r.CreatedAt, ReleasedAt: r.ReleasedAt, HeadID: r.HeadID}
	if len(r.Presence) > 0 {
		if err := json.Unmarshal(r.Presence, &b.Presence); err != nil {
			return nil, fmt.Errorf("box %s: its presence: %w", r.ID, err)
		}
	}
	return b, nil
}

// BoxRow is the box a :one query read or wrote; no row is
// store.ErrNotFound.
func BoxRow(r db.Box, err error) (*Box, error) {
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, store.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	return boxOf(r)
}

// BoxRows is the boxes a :many query read.
func BoxRows(rs []db.Box, err error) ([]*Box, error) {
	if err != nil {
		return nil, err
	}
	out := make([]*Box, len(rs))
	for i := range rs {
		if out[i], err = boxOf(rs[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}
