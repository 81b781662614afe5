package sweeps

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/store/db"
	"github.com/boxsnap/boxsnap/providers"
)

// OutsideWindow is how far back each outside-restore scan reads the task
// lists; each task is logged once (by its reference, kept on the event), so
// overlapping scans log nothing twice.
const OutsideWindow = 24 * time.Hour

// OutsideReport says what one outside-restore scan logged.
type OutsideReport struct {
	Tasks          int // tasks read
	Restored       int // restored-outside
	RestoreFailed  int // restore-outside-failed
	RestoreRunning int // restore-outside-running
	Changed        int // snapshots-changed-outside
	Unreachable    []string
}

// Task types that restore, and that change a guest's snapshots: on Proxmox
// the task types its API names in a task's UPID; on QEMU those its backend
// names for the reverts, takes and deletes it found made with libvirt.
var (
	rollbackTasks = []string{"vzrollback", "qmrollback", providers.TaskVirshRevert}
	changeTasks   = []string{"vzsnapshot", "qmsnapshot", "vzdelsnapshot", "qmdelsnapshot", providers.TaskVirshSnapshot, providers.TaskVirshDelete}
)

// ScanOutside reads each backend's task lists for restores made outside
// boxsnap: a rollback task on a box's guest that boxsnap did not
// start is logged by its status, restored-outside only when it ended OK,
// restore-outside-failed when it failed, restore-outside-running while it
// runs (and again once it ends); a snapshot take or delete boxsnap did not
// start is logged as "its snapshots changed outside boxsnap", with no
// repair and no claim of a restore. Each task is logged once per status.
// A task is boxsnap's when its reference is on one of its operations, or
// it was run by the user (the API token) that ran those. A one-host
// backend's (QEMU's) list is this host's alone, and is read for the boxes
// this host owns only (elsewhere).
func (s *Sweeps) ScanOutside(ctx context.Context) (OutsideReport, error) {
	return s.scanOutside(ctx, false)
}

// ScanOutsideHere is the scan of this host's one-host backends alone: only
// this host reads them, so each host runs it on its own queue, as the
// reconcile's ReconcileHere.
func (s *Sweeps) ScanOutsideHere(ctx context.Context) (OutsideReport, error) {
	return s.scanOutside(ctx, true)
}

func (s *Sweeps) scanOutside(ctx context.Context, oneHostOnly bool) (OutsideReport, error) {
	var rep OutsideReport
	now := s.now()
	for _, id := range s.order {
		be := s.backends[id]
		if oneHostOnly && !be.OneHost() {
			continue
		}
		lister, ok := be.Snap.(providers.TaskLister)
		if !ok {
			continue
		}
		tasks, err := lister.RecentTasks(ctx, now.Add(-OutsideWindow))
		if err != nil {
			var hosts *providers.HostsUnreachableError
			if !errors.As(err, &hosts) {
				rep.Unreachable = append(rep.Unreachable, id)
				s.logger.Warn("outside scan: task lists", "backend", id, "err", err)
				continue
			}
			for _, h := range hosts.Hosts {
				rep.Unreachable = append(rep.Unreachable, id+"/"+h)
			}
		}
		rep.Tasks += len(tasks)
		if err := s.scanBackend(ctx, be, tasks, &rep); err != nil {
			return rep, fmt.Errorf("outside scan of %s: %w", id, err)
		}
	}
	return rep, nil
}

// scannedBoxes are be's boxes this scan judges, by host and guest, and
// their IDs. A one-host backend's list (QEMU's libvirtd) is this host's
// alone: it says nothing of another host's boxes, which that host's scan
// reads, as the reconcile judges them.
func (s *Sweeps) scannedBoxes(ctx context.Context, be snapshots.Backend) (map[string]*snapshots.Box, []string, error) {
	boxes, err := snapshots.BoxRows(s.st.SweepBoxesOfBackend(ctx, s.st.Pool, be.ID))
	if err != nil {
		return nil, nil, err
	}
	o, err := s.ownersOf(ctx, be)
	if err != nil {
		return nil, nil, err
	}
	byGuest := map[string]*snapshots.Box{}
	ids := make([]string, 0, len(boxes))
	for _, b := range boxes {
		if s.elsewhere(be, b.Host, b.ID, o) {
			continue
		}
		byGuest[b.Host+"/"+b.GuestRef] = b
		ids = append(ids, b.ID)
	}
	return byGuest, ids, nil
}

func (s *Sweeps) scanBackend(ctx context.Context, be snapshots.Backend, tasks []providers.Task, rep *OutsideReport) error {
	byGuest, ids, err := s.scannedBoxes(ctx, be)
	if err != nil {
		return err
	}
	var earliest time.Time
	for _, t := range tasks {
		if earliest.IsZero() || t.Start.Before(earliest) {
			earliest = t.Start
		}
	}
	ops, err := s.st.SweepOpTasks(ctx, s.st.Pool, db.SweepOpTasksParams{Boxes: ids, Since: earliest.Add(-time.Hour)})
	if err != nil {
		return err
	}
	ours := map[string]bool{}
	for _, o := range ops {
		if o.Upid != "" {
			ours[o.Upid] = true
		}
	}
	// An operation keeps its latest task's reference only (a restore's
	// start replaces its rollback's), so who ran boxsnap's recorded tasks
	// (its token) marks its other tasks too.
	ourUsers := map[string]bool{}
	for _, t := range tasks {
		if ours[t.Ref.ID] && t.User != "" {
			ourUsers[t.User] = true
		}
	}
	tz := s.k.TimeZone(ctx)
	// Oldest first, so the box log reads in the order things happened.
	slices.SortFunc(tasks, func(a, b providers.Task) int { return a.Start.Compare(b.Start) })
	for _, t := range tasks {
		rollback := slices.Contains(rollbackTasks, t.Type)
		change := slices.Contains(changeTasks, t.Type)
		if !rollback && !change {
			continue
		}
		b := byGuest[t.Ref.Host+"/"+t.Guest]
		if b == nil || ours[t.Ref.ID] || ourUsers[t.User] {
			continue
		}
		kind := snapshots.EvChangedOutside
		switch {
		case !rollback:
		case t.End == nil:
			kind = snapshots.EvRestoreOutsideRun
		case t.Status == "OK" || len(t.Status) > 8 && t.Status[:8] == "WARNINGS":
			kind = snapshots.EvRestoredOutside
		default:
			kind = snapshots.EvRestoreOutsideFailed
		}
		logged, err := s.st.SweepTaskLogged(ctx, s.st.Pool, db.SweepTaskLoggedParams{BoxID: b.ID, Task: t.Ref.ID})
		if err != nil {
			return err
		}
		if slices.Contains(logged, kind) {
			continue
		}
		target := ""
		if t.Target != "" {
			if sn, err := s.k.SnapshotByRef(ctx, be.ID, t.Target); err == nil && sn.BoxID == b.ID {
				target = snapshots.NamedID(sn.Name, sn.ID)
			}
		}
		words := outsideWords(kind, t, target, tz)
		data := map[string]any{"task": t.Ref.ID, "host": t.Ref.Host, "type": t.Type, "user": t.User, "status": t.Status, "start": t.Start}
		if t.Target != "" {
			data["target"] = t.Target
		}
		if t.FirstSeen {
			data["firstSeen"] = true
		}
		s.k.Log(ctx, s.st.Pool, b.ID, kind, snapshots.System(byTaskList), words, "", "", data)
		switch kind {
		case snapshots.EvRestoredOutside:
			rep.Restored++
			// Then the box is set straight, as after boxsnap's own restore.
			if err := s.straightAfterOutside(ctx, b); err != nil {
				s.logger.Warn("set straight after a restore made outside", "box", b.Name, "err", err)
			}
		case snapshots.EvRestoreOutsideFailed:
			rep.RestoreFailed++
		case snapshots.EvRestoreOutsideRun:
			rep.RestoreRunning++
		default:
			rep.Changed++
		}
	}
	return nil
}

// straightAfterOutside sets a box straight after a restore made outside
// boxsnap, unless one of boxsnap's operations runs on it (which sets it
// straight itself when it is a restore, and must not be raced).
func (s *Sweeps) straightAfterOutside(ctx context.Context, b *snapshots.Box) error {
	be, err := s.k.Backend(b.BackendID)
	if err != nil {
		return err
	}
	active, err := s.ops.ActiveOnBox(ctx, s.st.Pool, b.ID, "")
	if err != nil {
		return err
	}
	if active > 0 {
		return nil
	}
	return s.straight.SetStraight(ctx, "", b, be, setStraightAfterOutside)
}
