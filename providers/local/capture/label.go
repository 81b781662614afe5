package capture

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/local/state"
	"github.com/boxsnap/boxsnap/providers/local/store"
)

// Excludes is what a snapshot leaves out, in the restore dialog's words.
const Excludes = "sockets and device files"

// TakeID gives the ID a take publishes its snapshot under: its label's,
// or a new one. An ID already held is refused, unless it holds this
// take's own snapshot: a step cut short after it published answers what
// it took (done), so its retry is done, not failed.
func (b *Capturer) TakeID(guest providers.Guest, lab providers.Label) (id string, taken providers.SnapshotTaken, done bool, err error) {
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

// NameManifest gives the captured manifest m its ID, its box's guest, the
// time it was captured, the box's reset version, and its parent, when the
// store still holds it.
func (b *Capturer) NameManifest(m *store.Manifest, id string, guest providers.Guest, parent string, capturedAt time.Time, reset int) {
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

// LabelFor gives the label a snapshot is published with: the take's, with
// its ID, the time it was captured and the box's reset version, for the
// box and this install when the take's names none.
func (b *Capturer) LabelFor(take providers.Label, id string, guest providers.Guest, capturedAt time.Time, reset int) store.Label {
	lab := store.Label{Label: take, TakenAt: capturedAt}
	lab.Snapshot = id
	lab.ResetVersion = reset
	if lab.Box == "" {
		lab.Box = guest.Ref
	}
	if lab.Install == "" {
		lab.Install = b.Install
	}
	return lab
}

// alreadyTaken answers the snapshot id as its take did, when it is held whole
// and was taken of guest with the same label: a take's step retried after it
// published.
func (b *Capturer) alreadyTaken(guest providers.Guest, want providers.Label, id string) (providers.SnapshotTaken, bool) {
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
	if err := b.States.UpdateState(guest.Ref, func(s *state.BoxState) {
		if s.Last != id {
			s.Last, s.Parent, s.StatCache = id, id, ""
		}
	}); err != nil {
		return providers.SnapshotTaken{}, false
	}
	b.Log.Info("local backend: the snapshot was already taken; answering it again", "box", guest.Ref, "snapshot", id)
	return b.Taken(m), true
}

// Taken is what a take answers of the manifest it published.
func (b *Capturer) Taken(m *store.Manifest) providers.SnapshotTaken {
	return providers.SnapshotTaken{
		Ref:          m.ID,
		Storage:      b.ID,
		CapturedAt:   m.CapturedAt,
		Holds:        providers.HoldsDisk,
		Size:         &providers.Size{Bytes: m.AddedBytes, Meaning: "own"},
		Excludes:     Excludes,
		ResetVersion: m.ResetVersion,
		Parent:       m.Parent,
	}
}
