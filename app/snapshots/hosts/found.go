package hosts

import (
	"context"
	"errors"
	"fmt"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/store/db"
	"github.com/boxsnap/boxsnap/providers"
)

// A box moved or taken over onto another host and released there while
// its old host was away leaves on the old host a copy no box in the
// database owns. As a snapshot of a gone box is found and never deleted,
// that copy is never deleted by boxsnap: the old host keeps it, found
// (Found): its process is stopped and never started again, its folder
// stays where it is until the person deletes it, and the released box's
// log and this host's log say where it is, once.

// Found is a backend that marks the copy held here of a box released
// elsewhere as found, kept and never started again: the local backend is
// one.
type Found interface {
	// FoundMarked says whether the copy of box is marked found.
	FoundMarked(box string) (bool, error)
	// MarkFound marks it found, leaving it as it is, and answers its
	// folder.
	MarkFound(box string) (dir string, err error)
}

// keepFound keeps this host's copy of the box whose guest was ref on be,
// which no box not released has, when the database says that box was
// released: its process is stopped and its copy marked found, the first time
// only, answering the box's name then; "" otherwise.
func (h *Hosts) keepFound(ctx context.Context, be snapshots.Backend, ref string) (string, error) {
	f, ok := be.Boxes.(Found)
	if !ok {
		return "", nil
	}
	if marked, err := f.FoundMarked(ref); err != nil || marked {
		return "", err
	}
	gone, err := h.st.HostReleasedBoxByGuest(ctx, h.st.Pool, db.HostReleasedBoxByGuestParams{BackendID: be.ID, GuestRef: ref})
	if err != nil {
		return "", fmt.Errorf("read the released box of %s's guest %s: %w", be.ID, ref, err)
	}
	if len(gone) == 0 {
		return "", nil // no box of this install had it: not boxsnap's to judge
	}
	r := gone[0]
	g := providers.Guest{Backend: be.ID, Kind: r.Kind, Host: h.host, Ref: ref, Generation: r.Generation}
	if err := be.Boxes.Stop(ctx, g); err != nil && !errors.Is(err, providers.ErrNotFound) {
		return "", fmt.Errorf("stop the copy of released box %s found on host %s: %w", r.Name, h.host, err)
	}
	dir, err := f.MarkFound(ref)
	if err != nil {
		return "", fmt.Errorf("keep the copy of released box %s found on host %s: %w", r.Name, h.host, err)
	}
	h.logger.Warn("kept the copy of a box released on another host, found on this host: its process stopped, its folder kept until the person deletes it",
		"box", r.Name, "host", h.host, "folder", dir)
	h.k.Log(ctx, h.st.Pool, r.ID, EvLeftFound, snapshots.System(foundWhy), logLeftFoundWords(h.host, dir), "", "", nil)
	return r.Name, nil
}
