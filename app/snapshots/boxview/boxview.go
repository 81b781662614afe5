package boxview

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/boxsnap/boxsnap/app/snapshots"

	"github.com/jackc/pgx/v5"

	"github.com/boxsnap/boxsnap/app/store"
	"github.com/boxsnap/boxsnap/app/store/db"
	"github.com/boxsnap/boxsnap/providers"
)

// BoxView is everything a box's page shows of the box's state, read at one
// moment: its records in one read-only, repeatable-read transaction (one
// snapshot of the rows), then its backend's answers once. Every part of the
// page is drawn from it, so no two parts disagree.
type BoxView struct {
	Box *snapshots.Box
	// Snapshots are the box's snapshots the caller may see, newest first,
	// automatic ones included.
	Snapshots []*snapshots.Snapshot
	// pins are what pins each of them now, by snapshot ID.
	Pins map[string][]snapshots.Pin
	// Head is the head's record, or nil: none yet, or deleted since.
	Head *snapshots.Snapshot
	// Undo is the box's newest undo, of a reset or a restore: what Undo
	// restores, or nil.
	Undo *snapshots.Snapshot
	// Log is the box's log, newest first, as far as the page asked.
	Log []snapshots.LogEvent
	// Ops are the operations the log's newest events and the pins name, by
	// ID; Running is boxsnap's own operation running on the box, or nil.
	Ops     map[string]*snapshots.Operation
	Running *snapshots.Operation
	// History is the box's automatic history, its settings in effect and
	// how many automatic snapshots it holds.
	History snapshots.BoxHistory
	// Trash is the box's entry in the trash, or nil.
	Trash *snapshots.TrashEntry

	// Status is the backend's answer on the guest (StatusErr when it did
	// not answer); Changes its answer on whether the disk changed since
	// the box's last snapshot (nil when the backend was not asked: a
	// released box, or no snapshots on it).
	Status    providers.GuestStatus
	StatusErr error
	Changes   *providers.ChangeCheck
}

// BoxViewOps is how many of the log's newest events have their operation
// read for a view (an unknown one shows with Check now).
const BoxViewOps = 100

// BoxView reads a box's view for its page: logLimit of its log's newest
// events (at least 200).
func (s *Views) BoxView(ctx context.Context, c snapshots.Caller, ref string, logLimit int) (*BoxView, error) {
	b, err := s.Box(ctx, c, ref)
	if err != nil {
		return nil, err
	}
	logLimit = max(logLimit, 200)
	if logLimit > snapshots.BoxLogKeep {
		logLimit = snapshots.BoxLogKeep
	}
	settings, err := s.Settings(ctx)
	if err != nil {
		return nil, err
	}
	v := &BoxView{Ops: map[string]*snapshots.Operation{}}
	err = s.readView(ctx, func(q db.DBTX) error {
		v.Ops = map[string]*snapshots.Operation{}
		return s.viewRows(ctx, q, c, b.ID, logLimit, settings, v)
	})
	if err != nil {
		return nil, err
	}
	s.viewBackend(ctx, v)
	return v, nil
}

// readView runs fn in one read-only, repeatable-read transaction: every
// read in it sees the rows as they were at its first. Within a page's one
// read (ReadOnce), it is that read, so the page's other parts (its
// requests, the take's refusal, the threads' titles) see the same rows.
func (s *Views) readView(ctx context.Context, fn func(q db.DBTX) error) error {
	return s.st.ReadOnce(ctx, func(ctx context.Context) error { return fn(s.st.Reader(ctx)) })
}

// viewRows reads the view's records, all through q: the box, its
// snapshots and their pins, its log, the operations they name, its history
// and its trash entry.
func (s *Views) viewRows(ctx context.Context, q db.DBTX, c snapshots.Caller, boxID string, logLimit int, settings snapshots.Settings, v *BoxView) error {
	b, err := s.BoxByID(ctx, q, boxID)
	if errors.Is(err, store.ErrNotFound) {
		return snapshots.BoxNotFound(boxID)
	}
	if err != nil {
		return err
	}
	if err := snapshots.MayAct(c, snapshots.ActSee, b, nil); err != nil {
		return snapshots.BoxNotFound(boxID)
	}
	v.Box = b
	byID, err := s.viewSnapshots(ctx, q, c, v)
	if err != nil {
		return err
	}
	if err := s.viewLog(ctx, q, c, logLimit, v); err != nil {
		return err
	}
	if err := s.viewOps(ctx, q, c, v); err != nil {
		return err
	}
	if err := s.viewHistory(ctx, q, settings, v); err != nil {
		return err
	}
	return s.viewTrash(ctx, q, byID, v)
}

// viewSnapshots reads the box's snapshots the caller may see, newest
// first, with their pins, the head, the newest undo and how many automatic
// snapshots the box holds; it answers them by ID.
func (s *Views) viewSnapshots(ctx context.Context, q db.DBTX, c snapshots.Caller, v *BoxView) (map[string]*snapshots.Snapshot, error) {
	b := v.Box
	all, err := s.SnapshotsOfBox(ctx, q, b.ID)
	if err != nil {
		return nil, err
	}
	pins, err := s.AllPins(ctx, q)
	if err != nil {
		return nil, err
	}
	v.Pins = map[string][]snapshots.Pin{}
	byID := map[string]*snapshots.Snapshot{}
	for _, sn := range all {
		if snapshots.MayAct(c, snapshots.ActSee, b, sn) != nil {
			continue
		}
		byID[sn.ID] = sn
		v.Snapshots = append(v.Snapshots, sn)
		if p := pins[sn.ID]; p != nil {
			v.Pins[sn.ID] = p
		}
		if sn.Automatic && sn.State != snapshots.StateDeleting {
			v.History.Count++
		}
	}
	sort.SliceStable(v.Snapshots, func(i, j int) bool { return v.Snapshots[i].TakenAt.After(v.Snapshots[j].TakenAt) })
	if b.HeadID != nil {
		v.Head = byID[*b.HeadID]
	}
	// The newest ready undo, of a reset or a restore, wherever its backend
	// holds it (a held copy too): what both of the page's Undo controls
	// restore.
	for _, sn := range v.Snapshots {
		if sn.UndoOf != nil && sn.State == snapshots.StateReady {
			v.Undo = sn
			break
		}
	}
	return byID, nil
}

// viewLog reads logLimit of the box log's newest events the caller may
// see: an agent sees no other thread's.
func (s *Views) viewLog(ctx context.Context, q db.DBTX, c snapshots.Caller, logLimit int, v *BoxView) error {
	rows, err := s.st.CoreLogOfBox(ctx, q, db.CoreLogOfBoxParams{BoxID: v.Box.ID, MaxRows: logLimit})
	if err != nil {
		return fmt.Errorf("read box log: %w", err)
	}
	for _, r := range rows {
		ev := snapshots.LogEvent(r)
		if c.Kind == snapshots.CallerAgent && ev.ActorKind == "agent" && (ev.ActorThread == nil || *ev.ActorThread != c.Thread) {
			continue
		}
		v.Log = append(v.Log, ev)
	}
	return nil
}

// viewOps reads the operations the log's newest events and the pins name,
// those the caller may see, and boxsnap's own operation running on the box.
func (s *Views) viewOps(ctx context.Context, q db.DBTX, c snapshots.Caller, v *BoxView) error {
	want := map[string]bool{}
	for i, ev := range v.Log {
		if i < BoxViewOps && ev.OperationID != nil {
			want[*ev.OperationID] = true
		}
	}
	for _, ps := range v.Pins {
		for _, p := range ps {
			want[p.Operation] = true
		}
	}
	for id := range want {
		op, err := s.ops.ByID(ctx, q, id)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return fmt.Errorf("read operation %s: %w", id, err)
		}
		if snapshots.MaySeeOperation(c, op) {
			v.Ops[id] = op
		}
	}
	if op, err := snapshots.OperationRow(s.st.HeldOpRunningOnBox(ctx, q, v.Box.ID)); err == nil {
		v.Running = op
	} else if !errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("read %s's operations: %w", v.Box.Name, err)
	}
	return nil
}

// viewHistory reads the box's automatic history settings in effect: its
// own where it has them, else the backend's.
func (s *Views) viewHistory(ctx context.Context, q db.DBTX, settings snapshots.Settings, v *BoxView) error {
	b := v.Box
	v.History.LimitGiB = int64(settings.HistoryGiB)
	row, err := s.st.HistorySettingsOf(ctx, q, b.ID)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("read %s's history settings: %w", b.Name, err)
	}
	v.History.Automatic = row.Automatic
	if row.MaxBytes != nil {
		g := *row.MaxBytes >> 30
		v.History.MaxGiB, v.History.LimitGiB = &g, g
	}
	if be, err := s.Backend(b.BackendID); err == nil {
		v.History.On = settings.AutomaticOn(be)
		v.History.Every = int(settings.CheckEvery(be).Seconds())
	}
	if v.History.Automatic != nil {
		v.History.On = *v.History.Automatic
	}
	return nil
}

// viewTrash reads a trashed box's entry in the trash, naming its final
// snapshot from byID.
func (s *Views) viewTrash(ctx context.Context, q db.DBTX, byID map[string]*snapshots.Snapshot, v *BoxView) error {
	b := v.Box
	if b.State != snapshots.BoxTrashed {
		return nil
	}
	r, err := s.TrashRow(ctx, q, b.ID)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	if r == nil {
		return nil
	}
	e := snapshots.TrashEntry{Box: b, TrashedAt: r.TrashedAt, Until: r.Until, Final: r.FinalSnapshot, FinalWords: r.FinalWords,
		WasRunning: r.WasRunning, ByKind: r.ByKind}
	if r.FinalSnapshot != nil && byID[*r.FinalSnapshot] != nil {
		e.FinalName = byID[*r.FinalSnapshot].Name
	}
	if be, err := s.Backend(b.BackendID); err == nil {
		e.Costs = snapshots.TrashCostWords(be.Kind)
	}
	v.Trash = &e
	return nil
}

// viewBackend asks the box's backend once for what the page shows beside
// the records: whether the guest runs, and whether its disk changed since
// its last snapshot.
func (s *Views) viewBackend(ctx context.Context, v *BoxView) {
	b := v.Box
	if b.ReleasedAt != nil || b.State == snapshots.BoxTrashed {
		return
	}
	be, ok := s.BackendOf(b)
	if !ok || be.Boxes == nil {
		v.StatusErr = errors.New("its backend is not configured here")
	} else if st, err := be.Boxes.Status(ctx, snapshots.GuestOf(b)); err != nil {
		v.StatusErr = fmt.Errorf("read %s's state: %w", b.Name, err)
	} else {
		v.Status = st
	}
	if !ok || be.Snap == nil || v.StatusErr != nil || !v.Status.Exists {
		return
	}
	if ch, err := be.Snap.Changes(ctx, snapshots.GuestOf(b)); err == nil {
		v.Changes = &ch
	} else {
		s.logger.Debug("a box's view: its backend did not say whether it changed", "box", b.ID, "err", err)
	}
}

// AutomaticNow is how a backend's boxes stand for the automatic history,
// as its check last saw each: running (checked at the backend's cadence),
// stopped (none taken until it runs), or off (for the box, or for the
// backend with no box's own choice).
type AutomaticNow struct {
	Running, Stopped, Off int
	// Unchecked are boxes with automatic snapshots on that the check has
	// not asked yet.
	Unchecked int
}

// AutomaticNowByBackend counts, by backend ID, how its live boxes stand for
// the automatic history now.
func (s *Views) AutomaticNowByBackend(ctx context.Context) (map[string]AutomaticNow, error) {
	settings, err := s.Settings(ctx)
	if err != nil {
		return nil, err
	}
	rows, err := s.st.HistoryBoxes(ctx, s.st.Pool)
	if err != nil {
		return nil, fmt.Errorf("read the boxes' automatic history: %w", err)
	}
	out := map[string]AutomaticNow{}
	for _, r := range rows {
		be, err := s.Backend(r.BackendID)
		if err != nil {
			continue
		}
		on := settings.AutomaticOn(be)
		if r.Automatic != nil {
			on = *r.Automatic
		}
		n := out[r.BackendID]
		switch {
		case !on:
			n.Off++
		case r.CheckedAt == nil:
			n.Unchecked++
		case r.Running:
			n.Running++
		default:
			n.Stopped++
		}
		out[r.BackendID] = n
	}
	return out, nil
}
