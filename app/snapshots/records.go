package snapshots

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/boxsnap/boxsnap/app/store"
	"github.com/boxsnap/boxsnap/app/store/db"
)

// SnapshotByID reads a snapshot; none is store.ErrNotFound.
func (s *Records) SnapshotByID(ctx context.Context, q db.DBTX, id string) (*Snapshot, error) {
	return SnapshotRow(s.st.CoreSnapshotByID(ctx, q, id))
}

// AllPins reads what pins each snapshot now: the running and unknown
// operations that name it, by snapshot ID.
func (s *Records) AllPins(ctx context.Context, q db.DBTX) (map[string][]Pin, error) {
	rows, err := s.st.CoreAllPins(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("read pins: %w", err)
	}
	pins := map[string][]Pin{}
	for _, p := range rows {
		pins[p.Snapshot] = append(pins[p.Snapshot], Pin{Operation: p.Operation, Kind: p.Kind, At: p.At, Box: p.Box})
	}
	return pins, nil
}

// SnapshotLock reads a snapshot and locks its row until tx ends; none is
// store.ErrNotFound.
func (s *Records) SnapshotLock(ctx context.Context, tx db.DBTX, id string) (*Snapshot, error) {
	return SnapshotRow(s.st.CoreSnapshotLock(ctx, tx, id))
}

// SnapshotByRef reads the snapshot of a backend's reference; none is
// store.ErrNotFound.
func (s *Records) SnapshotByRef(ctx context.Context, backend, ref string) (*Snapshot, error) {
	return SnapshotRow(s.st.CoreSnapshotsByRef(ctx, s.st.Pool, db.CoreSnapshotsByRefParams{BackendID: backend, Ref: ref}))
}

func (s *Records) SnapshotsOfBox(ctx context.Context, q db.DBTX, box string) ([]*Snapshot, error) {
	all, err := SnapshotRows(s.st.CoreSnapshotsOfBox(ctx, q, box))
	if err != nil {
		return nil, fmt.Errorf("read snapshots: %w", err)
	}
	return all, nil
}

// NamesOfBox is the names a box's snapshots hold, for a new name unique in
// the box.
func (s *Records) NamesOfBox(ctx context.Context, q db.DBTX, box string) (map[string]bool, error) {
	names, err := s.st.CoreSnapshotNames(ctx, q, box)
	if err != nil {
		return nil, fmt.Errorf("read names: %w", err)
	}
	out := make(map[string]bool, len(names))
	for _, n := range names {
		out[n] = true
	}
	return out, nil
}

// MoveState changes a snapshot's state, only along the transitions and only
// from the state it was read in.
func (s *Records) MoveState(ctx context.Context, q db.DBTX, sn *Snapshot, to, errWords string) error {
	if !CanMove(sn.State, to) {
		return fmt.Errorf("snapshot %s: %s → %s is not a state change a snapshot may make", sn.ID, sn.State, to)
	}
	n, err := s.st.CoreSnapshotState(ctx, q, db.CoreSnapshotStateParams{ID: sn.ID, OldState: sn.State, NewState: to, Error: NilIfEmpty(errWords)})
	if err != nil {
		return fmt.Errorf("snapshot %s → %s: %w", sn.ID, to, err)
	}
	if n == 0 {
		return fmt.Errorf("snapshot %s → %s: it is no longer %s", sn.ID, to, sn.State)
	}
	sn.State = to
	return nil
}

// Snapshot reads one snapshot as the caller may see it. A snapshot the
// caller may not see reads as not found.
func (s *Service) Snapshot(ctx context.Context, c Caller, id string) (*Snapshot, *Box, error) {
	if !ValidID(PrefixSnapshot, id) {
		return nil, nil, SnapshotNotFound(id)
	}
	sn, err := s.SnapshotByID(ctx, s.st.Pool, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil, SnapshotNotFound(id)
	}
	if err != nil {
		return nil, nil, err
	}
	b, err := s.BoxByID(ctx, s.st.Pool, sn.BoxID)
	if err != nil {
		return nil, nil, SnapshotNotFound(id)
	}
	if err := MayAct(c, ActSee, b, sn); err != nil {
		return nil, nil, SnapshotNotFound(id)
	}
	return sn, b, nil
}

// SnapshotOfBox finds a snapshot of a box by its ID or name, as the caller
// may see it (the tools take either).
func (s *Service) SnapshotOfBox(ctx context.Context, c Caller, boxRef, ref string) (*Snapshot, *Box, error) {
	if ValidID(PrefixSnapshot, ref) {
		sn, b, err := s.Snapshot(ctx, c, ref)
		if err != nil {
			return nil, nil, err
		}
		if boxRef != "" && b.ID != boxRef && b.Name != boxRef {
			return nil, nil, SnapshotNotFound(ref)
		}
		return sn, b, nil
	}
	b, err := s.Box(ctx, c, boxRef)
	if err != nil {
		return nil, nil, err
	}
	all, err := s.SnapshotsOfBox(ctx, s.st.Pool, b.ID)
	if err != nil {
		return nil, nil, err
	}
	for _, sn := range all {
		if sn.Name == ref && MayAct(c, ActSee, b, sn) == nil {
			return sn, b, nil
		}
	}
	return nil, nil, refusal(CodeNotFound, noSnapshotNamedWords(ref, b.Name))
}

// BoxSnapshots is one box with the snapshots the caller may see.
type BoxSnapshots struct {
	Box       *Box
	Snapshots []*Snapshot
	Pins      map[string][]Pin
}

// ListQuery narrows a list.
type ListQuery struct {
	Box  string // a box's ID or name; empty for every box the caller may see
	Kept bool   // only kept snapshots
	// Automatic, when set, lists only automatic snapshots (true) or only
	// saved ones (false).
	Automatic *bool
}

// List lists snapshots by box, as the caller may see them, newest first.
func (s *Service) List(ctx context.Context, c Caller, q ListQuery) ([]BoxSnapshots, error) {
	var boxes []*Box
	if q.Box != "" {
		b, err := s.Box(ctx, c, q.Box)
		if err != nil {
			return nil, err
		}
		boxes = []*Box{b}
	} else {
		var err error
		if boxes, err = s.boxes.List(ctx, c); err != nil {
			return nil, err
		}
	}
	pins, err := s.AllPins(ctx, s.st.Pool)
	if err != nil {
		return nil, err
	}
	// One read of the snapshots for every box: the tab lists thousands.
	byBox := map[string][]*Snapshot{}
	if q.Box != "" {
		all, err := s.SnapshotsOfBox(ctx, s.st.Pool, boxes[0].ID)
		if err != nil {
			return nil, err
		}
		byBox[boxes[0].ID] = all
	} else {
		all, err := SnapshotRows(s.st.CoreSnapshotsAll(ctx, s.st.Pool))
		if err != nil {
			return nil, fmt.Errorf("read snapshots: %w", err)
		}
		for _, sn := range all {
			byBox[sn.BoxID] = append(byBox[sn.BoxID], sn)
		}
	}
	var out []BoxSnapshots
	for _, b := range boxes {
		bs := BoxSnapshots{Box: b, Pins: map[string][]Pin{}}
		for _, sn := range byBox[b.ID] {
			if (q.Kept && !sn.Kept()) || (q.Automatic != nil && sn.Automatic != *q.Automatic) {
				continue
			}
			if MayAct(c, ActSee, b, sn) == nil {
				bs.Snapshots = append(bs.Snapshots, sn)
				if p := pins[sn.ID]; p != nil {
					bs.Pins[sn.ID] = p
				}
			}
		}
		sort.SliceStable(bs.Snapshots, func(i, j int) bool { return bs.Snapshots[i].TakenAt.After(bs.Snapshots[j].TakenAt) })
		if len(bs.Snapshots) > 0 || q.Box != "" {
			out = append(out, bs)
		}
	}
	return out, nil
}
