package hosts

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/store/db"
	"github.com/boxsnap/boxsnap/providers"
)

// A box moved or taken over leaves its copy on the host it left: its
// folder, its disk image, its state and, if it ran, its process. The old
// host, when its own work runs (and when a working process starts there),
// releases each copy it holds of a box the database says another host
// owns (ReleaseLeft), once its state has stayed unchanged for LeftQuiet.
// A box this host owns is never touched, nor one whose owner is not a
// host seen alive within SeenAliveFor, nor one with an operation not
// ended (it may still run here), nor any snapshot: the
// snapshots are the bucket's and the database's, and the copy of them in
// this host's folder is its cache.

// Held is a backend whose boxes' data is on this host's disk, which lists
// the boxes its folder holds by their guests' references: the local
// backend is one.
type Held interface {
	// HeldBoxes lists the boxes held here whose state was last changed
	// before since.
	HeldBoxes(ctx context.Context, since time.Time) ([]string, error)
}

// LeftQuiet is how long a copy's state must have stayed unchanged before
// ReleaseLeft releases it: a move makes the box's copy on its new host
// just before the transaction that makes that host its owner, and that
// new copy must not be taken for an old one meanwhile.
const LeftQuiet = 30 * time.Second

// LeftReport is what ReleaseLeft did: the boxes whose copy it released
// here, by name, how many copies it left for now because an operation of
// their box has not ended, and the boxes released elsewhere whose copy it
// found here and kept (KeepFound).
type LeftReport struct {
	Released []string
	Busy     int
	Found    []string
}

// ReleaseLeft releases the copies this host holds of boxes another host
// owns: each one's process is stopped and its folder, disk image and state
// removed. A copy whose box has an operation not ended waits for a later
// run. A copy of a box the database says was released is kept, found
// (keepFound). Errors of one box do not stop the others; they are joined.
func (h *Hosts) ReleaseLeft(ctx context.Context) (LeftReport, error) {
	var rep LeftReport
	var errs []error
	for _, be := range h.k.Backends() {
		held, ok := be.Boxes.(Held)
		if !ok {
			continue
		}
		refs, err := held.HeldBoxes(ctx, time.Now().Add(-LeftQuiet)) // file times: the real clock
		if err != nil {
			errs = append(errs, fmt.Errorf("list %s's boxes on host %s: %w", be.ID, h.host, err))
			continue
		}
		for _, ref := range refs {
			if err := h.leftOne(ctx, be, ref, &rep); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return rep, errors.Join(errs...)
}

// leftOne releases, or keeps found, this host's copy of the box whose
// guest is ref on be, and adds what it did to rep.
func (h *Hosts) leftOne(ctx context.Context, be snapshots.Backend, ref string, rep *LeftReport) error {
	rows, err := h.st.SecurityBoxByGuest(ctx, h.st.Pool, db.SecurityBoxByGuestParams{BackendID: be.ID, GuestRef: ref})
	if err != nil {
		return fmt.Errorf("read the box of %s's guest %s: %w", be.ID, ref, err)
	}
	if len(rows) == 0 { // no box has it now: one released meanwhile, maybe
		name, err := h.keepFound(ctx, be, ref)
		if name != "" {
			rep.Found = append(rep.Found, name)
		}
		return err
	}
	name, busy, err := h.releaseLeft(ctx, be, ref, rows)
	switch {
	case busy:
		rep.Busy++
	case name != "":
		rep.Released = append(rep.Released, name)
	}
	return err
}

// releaseLeft releases this host's copy of the box whose guest is ref on
// be (rows, the boxes not released that have it) when another host owns
// that box and none of its operations is unended, answering its name; ""
// when the copy stays.
func (h *Hosts) releaseLeft(ctx context.Context, be snapshots.Backend, ref string, rows []db.Box) (name string, busy bool, err error) {
	if len(rows) != 1 {
		return "", false, nil // no box, or not one only: nothing says it is another host's
	}
	r := rows[0]
	if r.OwnerHost == nil || *r.OwnerHost == h.host {
		return "", false, nil
	}
	// The owner must be a host seen alive: a box whose owner is a name no
	// process answers to (this host's own name changed, say) is never
	// released here, since its copy here may be its only one.
	owner, err := h.st.HostByName(ctx, h.st.Pool, *r.OwnerHost)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("read box %s's owner %s: %w", r.Name, *r.OwnerHost, err)
	}
	if h.now().Sub(owner.LastSeenAt) >= SeenAliveFor {
		return "", false, nil
	}
	if ops, err := h.st.HostBoxOpsUnended(ctx, h.st.Pool, &r.ID); err != nil {
		return "", false, fmt.Errorf("read box %s's operations: %w", r.Name, err)
	} else if len(ops) > 0 {
		return "", true, nil // it may run here still, or again (Check now)
	}
	g := providers.Guest{Backend: be.ID, Kind: r.Kind, Host: h.host, Ref: ref, Generation: r.Generation}
	if err := be.Boxes.Release(ctx, g); err != nil {
		return "", false, fmt.Errorf("release box %s's copy left on host %s: %w", r.Name, h.host, err)
	}
	h.logger.Info("released a moved box's copy left on this host", "box", r.Name, "host", h.host, "owner", *r.OwnerHost)
	h.k.Log(ctx, h.st.Pool, r.ID, EvLeftReleased, snapshots.System(leftWhy), logLeftReleasedWords(h.host, *r.OwnerHost), "", "", nil)
	return r.Name, false, nil
}
