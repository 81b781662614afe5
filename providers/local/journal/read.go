package journal

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/local/confined"
	"github.com/boxsnap/boxsnap/providers/local/state"
	"github.com/boxsnap/boxsnap/providers/local/store"
)

// Reads answers from the change journals what a box's files were last
// known to be and which of its paths changed since, reading the box's
// state file and the store's manifests.
type Reads struct {
	*Set
	*store.Store
	*state.States
	// ExistingBox checks a guest's folder is there and gives its path.
	ExistingBox func(guest providers.Guest) (string, error)
}

// journalBasis names what a box's files were last known to be, as a journal
// base: the last take, or the restore (with its stat cache) since.
func journalBasis(st state.BoxState) string {
	if st.StatCache != "" {
		return "restore:" + st.StatCache
	}
	if st.Last != "" {
		return "take:" + st.Last
	}
	return ""
}

// Change is what ChangedSinceTake found.
type Change struct {
	// Changed says the box's files may differ from its last take.
	Changed bool
	// Paths is how many paths the journal recorded as changed, or, when
	// the folder was read, how many files and links changed.
	Paths int
	// Walked says the folder was read, because the journal could not answer
	// (Why says why).
	Walked bool
	Why    string
	// Restored says the box was restored since its last take; Paths then
	// counts the paths changed since the restore.
	Restored bool
}

// ChangedSinceTake says whether the box's files changed since its last take.
// With its change journal running it reads no folder; without, it stats every
// path against the last take's manifest.
func (b *Reads) ChangedSinceTake(ctx context.Context, guest providers.Guest) (Change, error) {
	return b.ChangedSince(ctx, guest, false)
}

// ChangedSince is ChangedSinceTake; with rearm, a walk that finds nothing
// changed since the last take starts the journal's record from that take
// again (unless something changed while it walked), so the next answer
// reads no folder.
func (b *Reads) ChangedSince(ctx context.Context, guest providers.Guest, rearm bool) (Change, error) {
	dir, err := b.ExistingBox(guest)
	if err != nil {
		return Change{}, fmt.Errorf("check box for changes: %w", err)
	}
	st, err := b.ReadState(guest.Ref)
	if err != nil {
		return Change{}, fmt.Errorf("check box %s for changes: %w", guest.Ref, err)
	}
	why := "the box's change journal is not running (the box is stopped, or boxsnap restarted)"
	cut := JournalCut{}
	if j := b.JournalOf(guest.Ref); j != nil {
		j.Mu.Lock()
		j.DrainLocked()
		dead := j.Dead
		switch {
		case j.Dead != "":
			why = j.Dead
		case j.Lost != "":
			why = j.Lost
		case st.StatCache != "" && j.Base == journalBasis(st):
			n := j.BoxChanges()
			j.Mu.Unlock()
			return Change{Changed: true, Why: "restored since the last take", Restored: true, Paths: n}, nil
		case j.Base == "" || j.Base != journalBasis(st):
			why = "the journal records changes since another state of the box than its last take"
		default:
			n := j.BoxChanges()
			j.Mu.Unlock()
			return Change{Changed: n > 0, Paths: n}, nil
		}
		j.Mu.Unlock()
		if rearm && dead == "" && st.Last != "" && st.StatCache == "" {
			cut = b.CutJournal(guest.Ref)
		}
	}
	if st.Last == "" {
		return Change{Changed: true, Why: "no take yet"}, nil
	}
	// A box restored since its last take differs from that take by what
	// the restore brought: it is compared with the snapshot it was
	// restored to instead, so Paths counts what changed since the restore,
	// as the journal's answer does while the box runs.
	// The restore's stat cache holds that snapshot's entries with the stat
	// of each file as the restore wrote it.
	var prev map[string]*store.Entry
	restored := false
	if st.StatCache != "" && b.WholeSnapshot(st.StatCache) {
		var m store.Manifest
		if store.ReadChecked(b.StatCacheFile(guest.Ref), &m) == nil {
			prev, restored = m.ByPath(), true
		}
	}
	if !restored {
		if prev, err = b.ManifestIndex(st.Last); err != nil {
			return Change{Changed: true, Why: "the last take's manifest is unreadable"}, nil
		}
	}
	found, err := b.ScanTree(ctx, dir)
	if err != nil {
		return Change{}, fmt.Errorf("check box %s for changes: %w", guest.Ref, err)
	}
	out := Change{Walked: true, Why: why, Restored: restored}
	out.Changed, out.Paths = b.compareWalk(dir, found, prev)
	if restored {
		// Changed is against the last take, which the restore replaced.
		out.Changed = true
	}
	if !out.Changed && cut.Running {
		b.RebaseJournal(guest.Ref, cut, journalBasis(st))
	}
	return out, nil
}

// compareWalk says whether the paths a walk of the box's folder dir found
// differ from prev, what they were last known to be, and how many files
// and links changed (a folder changes with what it holds).
func (b *Reads) compareWalk(dir string, found []confined.Scanned, prev map[string]*store.Entry) (changed bool, paths int) {
	for _, own := range BoxsnapsOwn {
		if prev[own] != nil {
			prev = maps.Clone(prev)
			delete(prev, own)
		}
	}
	// A file of a fork's shared tree whose change time alone moved is as
	// the last take has it (Lower.SameShared). The box may rename its
	// folders while this reads, so no folder of the upper is kept open
	// between two files.
	var lower *Lower
	if b.UpperOf != nil {
		lower = OpenLower(b.UpperOf(dir))
		defer lower.Close()
	}
	n := 0
	for i := range found {
		s := &found[i]
		e := store.EntryFromStat(s.Rel, &s.St)
		if e.Type == "" || slices.Contains(BoxsnapsOwn, s.Rel) {
			continue
		}
		n++
		pe := prev[s.Rel]
		if pe == nil || pe.Type != e.Type || pe.Key() != e.Key() || pe.Mode != e.Mode ||
			pe.UID != e.UID || pe.GID != e.GID || pe.MTime != e.MTime {
			same := lower.SameShared(pe, &e, &s.St)
			lower.Forget()
			if same {
				continue
			}
			changed = true
			if e.Type != store.TypeDir {
				paths++ // a folder changes with what it holds
			}
		}
	}
	if n != len(prev) {
		changed = true
	}
	return changed, paths
}

// journalBase reads what the cut's record is relative to: the last take's
// manifest, or the stat cache a restore left.
func (b *Reads) journalBase(st state.BoxState) (*store.Manifest, bool, error) {
	if st.StatCache != "" {
		if !b.WholeSnapshot(st.StatCache) {
			return nil, false, errors.New("the restored snapshot is deleted or being deleted")
		}
		var m store.Manifest
		if err := store.ReadChecked(b.StatCacheFile(st.ID), &m); err != nil {
			return nil, false, fmt.Errorf("the stat cache is unreadable (%v)", err)
		}
		return &m, true, nil
	}
	if !b.WholeSnapshot(st.Last) {
		return nil, false, errors.New("the last take is deleted or being deleted")
	}
	m, err := b.Manifest(st.Last)
	if err != nil {
		return nil, false, fmt.Errorf("the last take's manifest is unreadable (%v)", err)
	}
	return m, false, nil
}

// FromJournal gives the box's paths as a walk would find them, from the base
// the cut is relative to and a stat of each path the cut names (a read of each
// folder it marks as new), with no walk. It answers why not when it cannot.
func (b *Reads) FromJournal(ctx context.Context, dir string, st state.BoxState, c JournalCut) ([]confined.Scanned, int, string) {
	if why := c.Usable(journalBasis(st)); why != "" {
		return nil, 0, why
	}
	base, restored, err := b.journalBase(st)
	if err != nil {
		return nil, 0, err.Error()
	}
	found, n, err := b.ReadChanged(ctx, dir, base, restored, c.Dirty, c.Sweep)
	if err != nil {
		return nil, 0, fmt.Sprintf("reading the journal's paths failed (%v)", err)
	}
	return found, n, ""
}

// NoteAtStop remembers, as a box stops, whether its journal recorded a
// change since its last take.
func (b *Reads) NoteAtStop(guest providers.Guest) {
	at := providers.ChangedUnknown
	if j := b.JournalOf(guest.Ref); j != nil {
		st, err := b.ReadState(guest.Ref)
		j.Mu.Lock()
		j.DrainLocked()
		switch {
		case err != nil || j.Dead != "" || j.Lost != "":
		case st.StatCache != "" && j.Base == journalBasis(st):
			at = providers.ChangedYes // restored since the last take
		case j.Base != "" && j.Base == journalBasis(st):
			at = providers.ChangedNo
			if j.BoxChanges() > 0 {
				at = providers.ChangedYes
			}
		}
		j.Mu.Unlock()
	}
	b.Journals.Mu.Lock()
	if b.Journals.AtStop == nil {
		b.Journals.AtStop = map[string]providers.Changed{}
	}
	b.Journals.AtStop[guest.Ref] = at
	b.Journals.Mu.Unlock()
}

// ChangeCadence: a local box is checked every 15 seconds; with its change
// journal running, a check reads no folder.
func (b *Reads) ChangeCadence() providers.Cadence {
	return providers.Cadence{Every: 15 * time.Second,
		Why: "the change journal answers without reading the box's folder"}
}
