package boot

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/boxsnap/boxsnap/app/config"
	"github.com/boxsnap/boxsnap/app/demo"
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

// demoGuestMemoryMiB is the demo guest's memory.
const demoGuestMemoryMiB = 256

// demoQEMU is the demo's QEMU backend, with cfg.Demo and no
// BOXSNAP_QEMU_SOCKET: on this host's libvirtd (qemu.DefaultSocket), its
// one template the guest the tests build from Debian's packages, found in
// the working folder's .cache and never built here (that takes minutes,
// and make run stays quick). Where either is missing it says so, and the
// demo has no QEMU box.
func demoQEMU(cfg config.Config, install string, logger *slog.Logger) *qemu.Backend {
	return demoQEMUAt(cfg, install, ".cache", qemu.DefaultSocket, logger)
}

// demoQEMUAt is demoQEMU with the cache folder and libvirtd's socket given.
func demoQEMUAt(cfg config.Config, install, cache, socket string, logger *slog.Logger) *qemu.Backend {
	if !cfg.Demo || cfg.QEMUSocket != "" {
		return nil
	}
	tpl, err := qemu.CachedTestGuest(cache, demoGuestMemoryMiB)
	if err != nil {
		logger.Info("demo: no QEMU box, as no QEMU guest is built here yet (make test builds it into .cache/qemu-guest)", "err", err)
		return nil
	}
	be, err := qemu.New(qemu.Config{ID: cfg.QEMUID, Socket: socket, Install: install, Dir: filepath.Join(cfg.DataDir, "qemu"),
		Accel: cfg.QEMUAccel, Templates: map[string]qemu.Template{demo.QEMUTemplate: tpl}, Logger: logger})
	if err != nil {
		logger.Warn("demo: no QEMU box", "err", err)
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := be.Ping(ctx); err != nil {
		_ = be.Close()
		logger.Info("demo: no QEMU box, as no libvirtd answers on this host (start libvirtd, or set BOXSNAP_QEMU_SOCKET)", "looked_at", socket)
		return nil
	}
	return be
}

// qemuLabel names the QEMU backend.
const qemuLabel = "QEMU on this host"

// qemuNote says in settings which accelerator runs the QEMU backend's
// guests, why, and how to get KVM where it does not run; it logs the same,
// so make run's log says it too.
func qemuNote(be *qemu.Backend, logger *slog.Logger) string {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c := be.AccelChoice(ctx)
	note := c.Why + "."
	if c.Fix != "" {
		note += " For KVM: " + c.Fix + "."
	}
	level := slog.LevelInfo
	if !c.OK {
		level = slog.LevelWarn
	}
	logger.Log(ctx, level, "qemu: "+c.Why, "backend", be.ID(), "accel", c.Accel, "setting", c.Asked, "fix", c.Fix)
	return note
}

// qemuResults runs the QEMU backend's own checks: libvirtd answers, and
// whether KVM or TCG runs its guests, with the fix.
func qemuResults(ctx context.Context, cfg config.Config, install string, logger *slog.Logger) []doctor.Result {
	if cfg.QEMUSocket == "" {
		return nil
	}
	be, err := qemuBackend(cfg, install, logger)
	if err != nil {
		return []doctor.Result{{Name: "backend " + cfg.QEMUID, Detail: err.Error(), Fix: "set BOXSNAP_QEMU_SOCKET to libvirtd's socket and BOXSNAP_QEMU_ACCEL to auto, kvm or tcg"}}
	}
	defer func() { _ = be.Close() }()
	var out []doctor.Result
	for _, c := range be.Doctor(ctx) {
		out = append(out, doctor.Result{Name: c.Name, OK: c.OK, Detail: c.Detail, Fix: c.Fix})
	}
	return out
}
