package qemu

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/boxsnap/boxsnap/providers"
)

// A held copy's files, read, listed and removed here, apart from its
// making (heldcopy.go), which reads its snapshot as a fork does.
const (
	heldSuffix = ".held"
	// storageHeld names where held copies live: a qcow2 each.
	storageHeld    = "qcow2-held-copy"
	heldRestoreWhy = "A held copy is never restored in place: fork it into a new box."
	// heldWhere is a held copy's SnapshotRef.Where, as the core records it.
	heldWhere = "held-copy"
)

// heldMeta is what a held copy is, beside its disk.
type heldMeta struct {
	Label    providers.Label `json:"label"`
	Template string          `json:"template"`
	Reset    int             `json:"resetVersion,omitempty"`
	Parent   string          `json:"parent,omitempty"`
	TakenAt  time.Time       `json:"takenAt"`
	// Whole is set once the copy's disk is all there.
	Whole bool `json:"whole"`
}

func (b *archives) heldDisk(id string) string {
	return filepath.Join(b.importsDir(), id+heldSuffix+".qcow2")
}

func (b *archives) heldMetaPath(id string) string {
	return filepath.Join(b.importsDir(), id+heldSuffix+".json")
}

// readHeld reads a held copy's record; a missing one wraps ErrNotFound.
func (b *archives) readHeld(id string) (heldMeta, error) {
	var m heldMeta
	if !validID.MatchString(id) {
		return m, fmt.Errorf("held copy %q: %w", id, providers.ErrNotFound)
	}
	raw, err := os.ReadFile(b.heldMetaPath(id))
	if errors.Is(err, os.ErrNotExist) {
		return m, fmt.Errorf("held copy of %s: %w", id, providers.ErrNotFound)
	}
	if err != nil {
		return m, err
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return m, fmt.Errorf("read the held copy of %s: %w", id, err)
	}
	return m, nil
}

// heldGuest is the guest a held copy's reference names: its file.
func (b heldCopies) heldGuest(id string) providers.Guest {
	return b.guest(id + heldSuffix + ".qcow2")
}

// heldRef is the reference of the held copy of the snapshot id, taken as ref.
func (b heldCopies) heldRef(id, ref string) providers.SnapshotRef {
	return providers.SnapshotRef{ID: id, Ref: ref, Guest: b.heldGuest(id), Storage: storageHeld, Where: heldWhere}
}

// removeHeld deletes the held copy of id: its record first, so a removal
// cut short leaves no copy half there; one already gone is removed.
func (b heldCopies) removeHeld(id string) error {
	if !validID.MatchString(id) {
		return nil
	}
	b.importMu.Lock()
	defer b.importMu.Unlock()
	base := b.heldDisk(id)
	for _, p := range []string{b.heldMetaPath(id), b.heldMetaPath(id) + ".part", base + ".part", base} {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("remove the held copy of %s: %w", id, err)
		}
	}
	return nil
}

// dropHalfHeld removes the held copy of id if it is not whole: deleting a
// snapshot sweeps what a copy of it cut short left.
func (b heldCopies) dropHalfHeld(id string) error {
	m, err := b.readHeld(id)
	if errors.Is(err, providers.ErrNotFound) {
		if _, serr := os.Stat(b.heldDisk(id) + ".part"); serr != nil {
			return nil
		}
	} else if err != nil || m.Whole {
		return err
	}
	return b.removeHeld(id)
}

// listHeld lists the held copies as HeldSnapshots: one not whole is
// listed incomplete, never as what it holds.
func (b heldCopies) listHeld() ([]providers.HeldSnapshot, error) {
	names, err := filepath.Glob(filepath.Join(b.importsDir(), "*"+heldSuffix+".json"))
	if err != nil {
		return nil, err
	}
	var out []providers.HeldSnapshot
	for _, n := range names {
		id := strings.TrimSuffix(filepath.Base(n), heldSuffix+".json")
		m, err := b.readHeld(id)
		if errors.Is(err, providers.ErrNotFound) {
			continue // removed since the listing, or not a name of ours
		}
		if err != nil {
			return nil, err
		}
		if m.Label.Install != b.cfg.Install {
			continue
		}
		h := providers.HeldSnapshot{Ref: b.heldRef(id, m.Label.Held), Label: m.Label, Storage: storageHeld, TakenAt: m.TakenAt,
			Holds: providers.HoldsDisk, Parent: m.Parent}
		if !m.Whole {
			h.Incomplete = true
			h.Error = fmt.Sprintf("its held copy %s was cut short before it was whole, so it is not trusted", h.Ref.Guest.Ref)
		}
		out = append(out, h)
	}
	return out, nil
}
