package boot

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"

	"github.com/boxsnap/boxsnap/app/config"
	"github.com/boxsnap/boxsnap/app/doctor"
	"github.com/boxsnap/boxsnap/providers/qemu"
)

// qemuBackend makes the QEMU backend on the libvirtd BOXSNAP_QEMU_SOCKET
// names, its boxes' disks in <data-dir>/qemu, its templates those in
// BOXSNAP_QEMU_TEMPLATES; nil where no socket is set, so nothing needs QEMU
// unless asked.
func qemuBackend(cfg config.Config, install string, logger *slog.Logger) (*qemu.Backend, error) {
	if cfg.QEMUSocket == "" {
		return nil, nil
	}
	var templates map[string]qemu.Template
	if cfg.QEMUTemplates != "" {
		var err error
		if templates, err = qemu.LoadTemplates(cfg.QEMUTemplates); err != nil {
			return nil, fmt.Errorf("qemu backend: %w", err)
		}
	}
	be, err := qemu.New(qemu.Config{ID: cfg.QEMUID, Socket: cfg.QEMUSocket, Install: install, Dir: filepath.Join(cfg.DataDir, "qemu"), Accel: cfg.QEMUAccel,
		Templates: templates, Logger: logger})
	if err != nil {
		return nil, fmt.Errorf("qemu backend: %w", err)
	}
	return be, nil
}

// qemuLabel names the QEMU backend in settings with how its guests run.
func qemuLabel(be *qemu.Backend) string {
	if be.Accel() == qemu.AccelKVM {
		return "QEMU on this host (KVM)"
	}
	return "QEMU on this host (TCG)"
}

// qemuResults runs the QEMU backend's own checks: libvirtd answers, and
// whether KVM or TCG runs its guests, with the fix.
func qemuResults(ctx context.Context, cfg config.Config, install string, logger *slog.Logger) []doctor.Result {
	if cfg.QEMUSocket == "" {
		return nil
	}
	be, err := qemuBackend(cfg, install, logger)
	if err != nil {
		return []doctor.Result{{Name: "backend " + cfg.QEMUID, Detail: err.Error(), Fix: "set BOXSNAP_QEMU_SOCKET to libvirtd's socket and BOXSNAP_QEMU_ACCEL to kvm or tcg"}}
	}
	defer func() { _ = be.Close() }()
	var out []doctor.Result
	for _, c := range be.Doctor(ctx) {
		out = append(out, doctor.Result{Name: c.Name, OK: c.OK, Detail: c.Detail, Fix: c.Fix})
	}
	return out
}
