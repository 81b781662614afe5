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
	return &snapshots.Refusal{Code: snapshots.CodeCannot, Words: snapshots.OneHostWords(b.Name, from, be.ID, gone)}
}

// noOwnerOneHostWords: a move of a box of a one-host backend that no host
// owns yet (made before such boxes had an owner).
func noOwnerOneHostWords(box, backend string) string {
	return fmt.Sprintf("%s is on %s, which one host's workers reach, and no host has listed it as its own yet; its host's reconcile owns it within minutes, and then it still cannot move: export a snapshot of it and import it on the other host.", box, backend)
}
