package demo

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/boxes"
)

// SeedProxmox adopts the simulated Proxmox VE's demo guests as boxes, once:
// an LXC box on LVM-thin (restores any snapshot; its snapshots fork and
// keep, as its image has the identity reset), a QEMU VM, a Windows VM (no
// fork, no Keep), and an LXC box on ZFS (restores only the newest, with a
// held copy as its undo, which Undo swaps in: on for the simulator only).
func SeedProxmox(ctx context.Context, bx *boxes.Boxes, backendID string, logger *slog.Logger) error {
	owner := snapshots.Owner()
	boxes, err := bx.List(ctx, owner)
	if err != nil {
		return err
	}
	for _, b := range boxes {
		if b.BackendID == backendID {
			return nil
		}
	}
	guests := []struct{ vmid, name, kind string }{
		{"214", "grey-ridge", "lxc"},
		{"215", "quiet-owl", "qemu"},
		{"216", "win-desk", "qemu-windows"},
		{"221", "tidy-glade", "lxc"},
	}
	for _, g := range guests {
		if _, err := bx.AcquireBox(ctx, owner, snapshots.BoxRequest{Name: g.name, Backend: backendID, Kind: g.kind, Adopt: g.vmid}); err != nil {
			return fmt.Errorf("adopt guest %s as %s: %w", g.vmid, g.name, err)
		}
	}
	logger.Info("seeded the demo on the simulated Proxmox VE: four guests adopted as boxes")
	return nil
}
