package hosts

import (
	"context"
	"fmt"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

// A box of a one-host backend other than the local one (QEMU's libvirtd,
// a Docker engine on a unix socket: snapshots.Backend.OneHost) is owned by
// its host as a local box is, but no content store carries its guest or
// its snapshots: they are in that host's libvirtd or engine. So a move or
// a takeover cannot carry it; an export of one of its snapshots, imported
// on the other host, makes a new box there.

// oneHostRefusal refuses to carry b, of the one-host backend be, from the
// host from, in words that say what can carry it instead: an export on
// from, while from runs; an export made before, once from is gone.
func (h *Hosts) oneHostRefusal(ctx context.Context, b *snapshots.Box, be snapshots.Backend, from string) error {
	gone := false
	if r, err := h.get(ctx, h.st.Pool, from); err == nil {
		gone = r.GoneAt != nil
	}
	return &snapshots.Refusal{Code: snapshots.CodeCannot, Words: oneHostWords(b.Name, from, be.ID, gone)}
}

// oneHostWords: a move or a takeover of a box of a one-host backend, which
// nothing carries between hosts.
func oneHostWords(box, host, backend string, gone bool) string {
	what := fmt.Sprintf("%s's guest and its snapshots are in host %s's own %s backend, which no other host reaches and no content store carries, so they cannot be carried over.", box, host, backend)
	if gone {
		return what + " An export of one of its snapshots made before, imported on this host, makes it anew as a new box."
	}
	return what + fmt.Sprintf(" Export one of its snapshots on host %s and import it on the other host: that makes a new box there.", host)
}

// noOwnerOneHostWords: a move of a box of a one-host backend that no host
// owns yet (made before such boxes had an owner).
func noOwnerOneHostWords(box, backend string) string {
	return fmt.Sprintf("%s is on %s, which one host's workers reach, and no host has listed it as its own yet; its host's reconcile owns it within minutes, and then it still cannot move: export a snapshot of it and import it on the other host.", box, backend)
}
