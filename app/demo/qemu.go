package demo

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/boxes"
	"github.com/boxsnap/boxsnap/providers/qemu"
)

// QEMUTemplate is the demo's box template on the QEMU backend, and the
// backend's own template it names: the busybox guest the tests build from
// Debian's packages.
const QEMUTemplate = "busybox-qemu"

// SeedQEMU makes a box template of the demo's guest and one box from it,
// once; the box is made stopped, its first boot under TCG a few tens of
// seconds.
func SeedQEMU(ctx context.Context, bx *boxes.Boxes, be *qemu.Backend, logger *slog.Logger) error {
	owner := snapshots.Owner()
	list, err := bx.List(ctx, owner)
	if err != nil {
		return err
	}
	for _, b := range list {
		if b.BackendID == be.ID() {
			return nil
		}
	}
	if _, err := bx.Template(ctx, QEMUTemplate); err != nil {
		if err := bx.SaveTemplate(ctx, owner, snapshots.BoxTemplate{Name: QEMUTemplate, Backend: be.ID(), Kind: qemu.KindLinux,
			Source: QEMUTemplate}); err != nil {
			return fmt.Errorf("save the demo's QEMU box template: %w", err)
		}
	}
	if _, err := bx.AcquireBox(ctx, owner, snapshots.BoxRequest{Name: "still-fjord", Template: QEMUTemplate}); err != nil {
		return fmt.Errorf("make the demo's QEMU box: %w", err)
	}
	logger.Info("seeded the demo on QEMU: one stopped box from the busybox-qemu template", "backend", be.ID())
	return nil
}
