package held

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/local/store"
)

// Held answers which snapshots the store holds, whole or not, and keeps
// the date each is kept until.
type Held struct {
	*store.Store
	id      string // the backend's ID in settings
	host    string // this machine's name
	install string // this install's ID; "" lists every install's snapshots
	guestOf func(box, kind string) providers.Guest
	// Shipped says whether a snapshot is wholly in the content store: its
	// content may then have left this host's cache. Nil where there is no
	// content store.
	Shipped func(id string) bool
}

// New gives the snapshots st holds, for the backend id on host, of install
// (every install's when ""), naming each box's guest by guestOf.
func New(st *store.Store, id, host, install string, guestOf func(box, kind string) providers.Guest) *Held {
	return &Held{Store: st, id: id, host: host, install: install, guestOf: guestOf}
}

// HeldSnapshots lists every snapshot of this install in the store, from its
// label, so the core finds them again after its records are lost. A snapshot
// with a damaged label or manifest, missing or damaged content, or a delete
// that stopped part way, is listed Incomplete with the reason in words.
func (b *Held) HeldSnapshots(ctx context.Context) ([]providers.HeldSnapshot, error) {
	dirs, err := os.ReadDir(b.Path(store.DirSnapshots))
	if err != nil {
		return nil, fmt.Errorf("list the snapshots in %s: %w", b.Path(store.DirSnapshots), err)
	}
	var all []heldOne
	contentOK := make(map[string]bool)
	for _, d := range dirs {
		if strings.HasPrefix(d.Name(), ".") || !d.IsDir() {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if o, ok := b.readHeld(d.Name(), contentOK); ok {
			all = append(all, o)
		}
	}
	return heldInOrder(all), nil
}

// heldOne is a snapshot in the store as HeldSnapshots lists it, with the
// content its manifest names (nil when it has none readable).
type heldOne struct {
	held   providers.HeldSnapshot
	hashes map[string]int64
}

// readHeld reads the snapshot id in the store from its label and its
// manifest, marking it Incomplete with the first reason found: a damaged
// label or manifest, a delete that stopped part way, a damage noted, or
// missing or damaged content (contentOK keeps what was checked). It says
// false for a snapshot of another install.
func (b *Held) readHeld(id string, contentOK map[string]bool) (heldOne, bool) {
	dir := b.SnapDir(id)
	var lab store.Label
	lerr := store.ReadChecked(filepath.Join(dir, store.FileLabel), &lab)
	if lerr == nil && b.install != "" && lab.Install != b.install {
		return heldOne{}, false
	}
	h := providers.HeldSnapshot{
		Ref:     providers.SnapshotRef{ID: lab.Snapshot, Ref: id, Storage: b.id, Where: "current"},
		Label:   lab.Label,
		Host:    b.host,
		Storage: b.id,
		TakenAt: lab.TakenAt,
		Holds:   providers.HoldsDisk,
	}
	if lerr != nil {
		h.Ref.ID = id
		h.Label.Snapshot = id
		incomplete(&h, fmt.Sprintf("Its label is unreadable: %v", lerr))
	}
	if _, err := os.Stat(filepath.Join(dir, store.FileDeleting)); err == nil {
		incomplete(&h, "Its delete stopped part way; delete it again to finish")
	}
	if data, err := os.ReadFile(filepath.Join(dir, store.FileDamaged)); err == nil {
		incomplete(&h, strings.TrimSpace(string(data)))
	}
	o := heldOne{}
	m, err := b.Manifest(id)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			incomplete(&h, "Its manifest is missing")
		} else {
			incomplete(&h, fmt.Sprintf("Its manifest is damaged on disk (%v)", err))
		}
	} else {
		h.Ref.Guest = m.Guest
		if lerr == nil && lab.Box != "" && lab.Box != m.Guest.Ref {
			h.Ref.Guest = b.guestOf(lab.Box, m.Guest.Kind) // imported for this box
		}
		h.Parent = m.Parent
		if h.TakenAt.IsZero() {
			h.TakenAt = m.CapturedAt
		}
		o.hashes = m.Hashes()
		// A shipped snapshot's content is in the bucket: a read fetches
		// what left this host. One published but not yet shipped is not
		// ready.
		if _, err := os.Stat(filepath.Join(dir, store.FileUnshipped)); err == nil && b.Shipped != nil && !b.Shipped(id) {
			h.Unshipped = !h.Incomplete
			incomplete(&h, "It is not yet wholly in the content store: taken again, it ships the rest")
		}
		if b.Shipped == nil || !b.Shipped(id) {
			if why := b.contentMissing(m, contentOK); why != "" {
				incomplete(&h, why)
			}
		}
	}
	o.held = h
	return o, true
}

// incomplete marks h Incomplete for why, unless it is already for another
// reason.
func incomplete(h *providers.HeldSnapshot, why string) {
	if !h.Incomplete {
		h.Incomplete = true
		h.Error = why
	}
}

// contentMissing says, in words, the first file of m whose content the
// store lacks or holds at another size; "" when it holds all. contentOK
// keeps what was checked, for the next snapshot.
func (b *Held) contentMissing(m *store.Manifest, contentOK map[string]bool) string {
	for i := range m.Entries {
		e := &m.Entries[i]
		if e.Type != store.TypeFile {
			continue
		}
		ok, seen := contentOK[e.Hash]
		if !seen {
			fi, err := os.Lstat(b.ContentPath(e.Hash))
			ok = err == nil && fi.Size() == e.Size
			contentOK[e.Hash] = ok
		}
		if !ok {
			return fmt.Sprintf("The content of %s is missing or damaged on disk", e.Path)
		}
	}
	return ""
}

// heldInOrder gives the snapshots of all in the order they were taken,
// each with its own size: the content no other of them shares.
func heldInOrder(all []heldOne) []providers.HeldSnapshot {
	uses := make(map[string]int)
	for _, o := range all {
		for hash := range o.hashes {
			uses[hash]++
		}
	}
	out := make([]providers.HeldSnapshot, 0, len(all))
	for _, o := range all {
		if o.hashes != nil {
			var own int64
			for hash, size := range o.hashes {
				if uses[hash] == 1 {
					own += size
				}
			}
			o.held.Size = &providers.Size{Bytes: own, Meaning: "own"}
		}
		out = append(out, o.held)
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].TakenAt.Equal(out[j].TakenAt) {
			return out[i].TakenAt.Before(out[j].TakenAt)
		}
		return out[i].Ref.Ref < out[j].Ref.Ref
	})
	return out
}

// SetKeptUntil writes a snapshot's keep date on its label (nil: not kept),
// so a kept snapshot is found again as kept after boxsnap's records are lost.
func (b *Held) SetKeptUntil(ctx context.Context, ref providers.SnapshotRef, keptUntil *time.Time) error {
	id := store.SnapID(ref)
	if err := store.CheckID("snapshot", id); err != nil {
		return err
	}
	path := filepath.Join(b.SnapDir(id), store.FileLabel)
	var lab store.Label
	if err := store.ReadChecked(path, &lab); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("set the keep date of snapshot %s: %w", id, providers.ErrNotFound)
		}
		return fmt.Errorf("set the keep date of snapshot %s: its label is %v: %w", id, err, providers.ErrIncomplete)
	}
	if keptUntil != nil {
		t := keptUntil.UTC()
		lab.KeptUntil = &t
	} else {
		lab.KeptUntil = nil
	}
	data, err := store.EncodeChecked(lab)
	if err != nil {
		return err
	}
	if err := store.WriteFileAtomic(path, data, 0o600); err != nil {
		return fmt.Errorf("set the keep date of snapshot %s: %w", id, err)
	}
	return nil
}
