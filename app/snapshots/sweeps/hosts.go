package sweeps

import (
	"context"
	"fmt"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/store/db"
)

// owners is who owns each box of a one-host backend other than the local
// one (snapshots.Backend.OneHost: QEMU, a Docker engine on a unix socket),
// as this host's sweeps read it: their records name no host of boxsnap's,
// so the box's owner says whose they are.
type owners struct {
	of map[string]*string // box ID → its owner; nil: none yet
	// alone: no other host ran boxsnap here and is not marked gone, so
	// this host judges the boxes no host owns yet too.
	alone bool
}

// ownersOf reads the owners of be's boxes when be is one host's and its
// records name no host; nil otherwise (every host reaches be, or its
// records say their host).
func (s *Sweeps) ownersOf(ctx context.Context, be snapshots.Backend) (*owners, error) {
	if s.host == "" || !be.OneHost() || be.Kind == "local" {
		return nil, nil
	}
	rows, err := s.st.HostBoxOwners(ctx, s.st.Pool, be.ID)
	if err != nil {
		return nil, fmt.Errorf("the owners of %s's boxes: %w", be.ID, err)
	}
	others, err := s.st.HostOthersKnown(ctx, s.st.Pool, s.host)
	if err != nil {
		return nil, fmt.Errorf("the other hosts: %w", err)
	}
	o := &owners{of: make(map[string]*string, len(rows)), alone: others == 0}
	for _, r := range rows {
		o.of[r.ID] = r.OwnerHost
	}
	return o, nil
}

// elsewhere reports whether a record of backend be on host, of box, is
// another host's to check. A local backend's listing, its boxes' folders
// and its storage are of this host's disk only, and its records name the
// host they are on; a QEMU backend's (this host's libvirtd) and a local
// Docker engine's are likewise this host's alone, and their boxes' owner
// (o) says whose a record is. So a sweep here proves nothing of another
// host's snapshots and boxes: the reconcile must neither mark them lost
// nor their guests gone, and the room sweep must not free another host's
// snapshots for this host's full disk. A box of such a backend that no
// host owns yet is another host's to judge too, unless no other host runs
// boxsnap here. A local record with no host (made before hosts were
// recorded) and a process told no host are checked as before.
func (s *Sweeps) elsewhere(be snapshots.Backend, host, box string, o *owners) bool {
	if s.host == "" {
		return false
	}
	if be.Kind == "local" {
		return host != "" && host != s.host
	}
	if o == nil {
		return false
	}
	owner := o.of[box]
	if owner == nil {
		return !o.alone
	}
	return *owner != s.host
}

// ownerOf is the host that owns sn's box ("" for none), read once per
// backend into owned: a backend not in this host's settings may be
// another host's one-host backend (QEMU on that host alone), whose
// snapshots this host must not mark unavailable.
func (s *Sweeps) ownerOf(ctx context.Context, owned map[string]map[string]*string, sn *snapshots.Snapshot) (string, error) {
	of, ok := owned[sn.BackendID]
	if !ok {
		rows, err := s.st.HostBoxOwners(ctx, s.st.Pool, sn.BackendID)
		if err != nil {
			return "", fmt.Errorf("the owners of %s's boxes: %w", sn.BackendID, err)
		}
		of = make(map[string]*string, len(rows))
		for _, r := range rows {
			of[r.ID] = r.OwnerHost
		}
		owned[sn.BackendID] = of
	}
	if o := of[sn.BoxID]; o != nil {
		return *o, nil
	}
	return "", nil
}

// claim makes box this host's when no host owns it yet and this host's
// backend lists its guest or one of its snapshots: a box of a one-host
// backend made before such boxes had an owner becomes the host's that
// lists it first. That is safe: the listing read this host's libvirtd or
// engine, so the guest is here, and the update takes only a box no host
// owns, so two hosts never both take it.
func (s *Sweeps) claim(ctx context.Context, box string, o *owners) {
	if o == nil || box == "" {
		return
	}
	if owner, ok := o.of[box]; !ok || owner != nil {
		return
	}
	n, err := s.st.HostBoxClaim(ctx, s.st.Pool, db.HostBoxClaimParams{Host: s.host, ID: box})
	if err != nil {
		s.logger.Warn("reconcile: own a box listed here", "box", box, "err", err)
		return
	}
	if n == 1 {
		h := s.host
		o.of[box] = &h
		s.logger.Info("a box no host owned is this host's: its backend lists it here", "box", box, "host", s.host)
	}
}
