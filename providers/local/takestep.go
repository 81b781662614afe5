package local

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
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
	id, taken, done, err := b.takeID(guest, take.Label)
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
	b.nameManifest(m, id, guest, st.Parent, capturedAt, reset)
	lab := b.labelFor(take.Label, id, guest, capturedAt, reset)
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
	b.log.Debug("local backend: snapshot taken", "box", guest.Ref, "snapshot", id, "files", m.Files,
		"bytes", m.Bytes, "added", m.AddedBytes, "paused", pausedFor, "journal", found != nil,
		"journalPaths", journalRead, "scan", stats.StatTime,
		"copy", stats.CopyTime, "capture", captured, "publish", time.Since(start)-captured)
	taken = b.taken(m)
	taken.Paused = pausedFor
	return taken, nil
}

// takeID gives the ID a take publishes its snapshot under: its label's,
// or a new one. An ID already held is refused, unless it holds this
// take's own snapshot: a step cut short after it published answers what
// it took (done), so its retry is done, not failed.
func (b *Backend) takeID(guest providers.Guest, lab providers.Label) (id string, taken providers.SnapshotTaken, done bool, err error) {
	id = lab.Snapshot
	if id == "" {
		id = store.NewSnapshotID()
	}
	if err := store.CheckID("snapshot", id); err != nil {
		return "", taken, false, err
	}
	if _, err := os.Lstat(b.SnapDir(id)); err == nil {
		if taken, ok := b.alreadyTaken(guest, lab, id); ok {
			return id, taken, true, nil
		}
		return "", taken, false, &providers.RefusedError{Why: fmt.Sprintf("A snapshot with ID %s is already held", id)}
	}
	return id, taken, false, nil
}

// nameManifest gives the captured manifest m its ID, its box's guest, the
// time it was captured, the box's reset version, and its parent, when the
// store still holds it.
func (b *Backend) nameManifest(m *store.Manifest, id string, guest providers.Guest, parent string, capturedAt time.Time, reset int) {
	m.ID = id
	m.Guest = guest
	m.Parent = parent
	if m.Parent != "" {
		if _, err := os.Stat(b.SnapDir(m.Parent)); err != nil {
			m.Parent = ""
		}
	}
	m.CapturedAt = capturedAt
	m.ResetVersion = reset
}

// labelFor gives the label a snapshot is published with: the take's, with
// its ID, the time it was captured and the box's reset version, for the
// box and this install when the take's names none.
func (b *Backend) labelFor(take providers.Label, id string, guest providers.Guest, capturedAt time.Time, reset int) store.Label {
	lab := store.Label{Label: take, TakenAt: capturedAt}
	lab.Snapshot = id
	lab.ResetVersion = reset
	if lab.Box == "" {
		lab.Box = guest.Ref
	}
	if lab.Install == "" {
		lab.Install = b.install
	}
	return lab
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

// alreadyTaken answers the snapshot id as its take did, when it is held whole
// and was taken of guest with the same label: a take's step retried after it
// published.
func (b *Backend) alreadyTaken(guest providers.Guest, want providers.Label, id string) (providers.SnapshotTaken, bool) {
	if !b.WholeSnapshot(id) {
		return providers.SnapshotTaken{}, false
	}
	var lab store.Label
	if store.ReadChecked(filepath.Join(b.SnapDir(id), store.FileLabel), &lab) != nil ||
		(want.Box != "" && lab.Box != want.Box) || (want.Install != "" && lab.Install != want.Install) {
		return providers.SnapshotTaken{}, false
	}
	m, err := b.Manifest(id)
	if err != nil || m.Guest.Ref != guest.Ref {
		return providers.SnapshotTaken{}, false
	}
	if err := b.UpdateState(guest.Ref, func(s *state.BoxState) {
		if s.Last != id {
			s.Last, s.Parent, s.StatCache = id, id, ""
		}
	}); err != nil {
		return providers.SnapshotTaken{}, false
	}
	b.log.Info("local backend: the snapshot was already taken; answering it again", "box", guest.Ref, "snapshot", id)
	return b.taken(m), true
}

// taken is what a take answers of the manifest it published.
func (b *Backend) taken(m *store.Manifest) providers.SnapshotTaken {
	return providers.SnapshotTaken{
		Ref:          m.ID,
		Storage:      b.id,
		CapturedAt:   m.CapturedAt,
		Holds:        providers.HoldsDisk,
		Size:         &providers.Size{Bytes: m.AddedBytes, Meaning: "own"},
		Excludes:     excludes,
		ResetVersion: m.ResetVersion,
		Parent:       m.Parent,
	}
}
