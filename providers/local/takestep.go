package local

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/local/capture"
	"github.com/boxsnap/boxsnap/providers/local/journal"
	"github.com/boxsnap/boxsnap/providers/local/state"
	"github.com/boxsnap/boxsnap/providers/local/store"
)

// Snapshot takes one snapshot of the box's folder. A running box's process
// group is paused (SIGSTOP) for the take and always resumed (SIGCONT). Only
// files whose size, mtime, ctime or inode differ from the box's previous
// snapshot are read; new content is copied into the store once, by hash.
func (b *Backend) Snapshot(ctx context.Context, guest providers.Guest, take providers.SnapshotTake, rec providers.Recorder) (providers.SnapshotTaken, error) {
	if take.Memory {
		return providers.SnapshotTaken{}, fmt.Errorf("take a snapshot with memory: %w", providers.ErrUnsupported)
	}
	dir, err := b.existingBox(guest)
	if err != nil {
		return providers.SnapshotTaken{}, fmt.Errorf("take a snapshot: %w", err)
	}
	id, taken, done, err := b.TakeID(guest, take.Label)
	if done && err == nil {
		// A take killed before its snapshot was in the content store ships
		// the rest now.
		err = b.shipper.Ship(ctx, id)
	}
	if done || err != nil {
		return taken, err
	}
	st, err := b.ReadState(guest.Ref)
	if err != nil {
		return providers.SnapshotTaken{}, err
	}

	lock, err := b.LockStore(ctx, false)
	if err != nil {
		return providers.SnapshotTaken{}, err
	}
	resume, _ := b.pause(guest.Ref)
	var once sync.Once
	var pausedFor time.Duration
	doResume := func() { once.Do(func() { pausedFor = resume() }) }
	defer doResume()

	capturedAt := time.Now().UTC()
	start := time.Now()
	// The change journal is cut once the box is paused: what changed before
	// is in this take, what changes after goes to the next one's record.
	// The previous manifest is read under the lock, so its content cannot be
	// swept while this take reuses it.
	jc := b.CutJournal(guest.Ref)
	found, journalRead, why := b.FromJournal(ctx, dir, st, jc)
	var prev map[string]*store.Entry
	if found == nil {
		b.log.Info("local backend: the take reads the box's whole folder", "box", guest.Ref, "why", why)
		prev = b.StatIndex(st)
	}
	reset := readResetVersion(dir)
	m, added, stats, err := b.Capture(ctx, dir, prev, found, take.RoomPercent)
	doResume()
	if err != nil {
		lock.Unlock()
		b.Collect(ctx, added)
		return providers.SnapshotTaken{}, fmt.Errorf("take a snapshot of box %s: %w", guest.Ref, err)
	}
	b.NameManifest(m, id, guest, st.Parent, capturedAt, reset)
	lab := b.LabelFor(take.Label, id, guest, capturedAt, reset)
	lab.Run = runOf(st)
	captured := time.Since(start)
	if err := b.Publish(ctx, m, lab); err != nil {
		lock.Unlock()
		b.Collect(ctx, added)
		return providers.SnapshotTaken{}, fmt.Errorf("take a snapshot of box %s: %w", guest.Ref, err)
	}
	b.Remember(id, m)
	lock.Unlock()
	if err := b.afterTake(guest.Ref, id, jc, stats, found == nil); err != nil {
		return providers.SnapshotTaken{}, err
	}
	if err := b.shipper.Ship(ctx, id); err != nil {
		return providers.SnapshotTaken{}, err
	}
	if _, err := b.shipper.Evict(ctx); err != nil {
		b.log.Warn("local backend: the content cache could not be brought under its bound", "err", err)
	}
	b.log.Debug("local backend: snapshot taken", "box", guest.Ref, "snapshot", id, "files", m.Files,
		"bytes", m.Bytes, "added", m.AddedBytes, "paused", pausedFor, "journal", found != nil,
		"journalPaths", journalRead, "scan", stats.StatTime,
		"copy", stats.CopyTime, "capture", captured, "publish", time.Since(start)-captured)
	taken = b.Taken(m)
	taken.Paused = pausedFor
	return taken, nil
}

// afterTake records a published snapshot as the box's last and its parent
// from now, moves the change journal's base to it, forgets what the
// journal said as the box stopped (of the folder before this take), and
// keeps watching its hard links; a take that read the whole folder
// (walked) measures the running rates.
func (b *Backend) afterTake(box, id string, jc journal.JournalCut, stats capture.TakeStats, walked bool) error {
	if err := b.UpdateState(box, func(s *state.BoxState) { s.Last = id; s.Parent = id; s.ID = box; s.StatCache = "" }); err != nil {
		return fmt.Errorf("take a snapshot of box %s: it is held, but: %w", box, err)
	}
	b.RebaseJournal(box, jc, "take:"+id)
	b.Journals.Mu.Lock()
	delete(b.Journals.AtStop, box)
	b.Journals.Mu.Unlock()
	b.WatchLinked(box, stats.Linked, walked)
	if walked {
		b.Measure(stats.Files, stats.StatTime, stats.Copied, stats.CopyTime)
	}
	return nil
}
