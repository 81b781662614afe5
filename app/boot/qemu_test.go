package boot

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/app/config"
	"github.com/boxsnap/boxsnap/app/demo"
	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/qemu"
	"github.com/boxsnap/boxsnap/providers/qemu/qemutest"
)

// TestBootRegistersTheQEMUBackend: BOXSNAP_QEMU_SOCKET turns a QEMU backend
// on, on that libvirtd, named in settings with how its guests run; without
// it there is none, and a bad accelerator or socket is refused in words.
func TestBootRegistersTheQEMUBackend(t *testing.T) {
	t.Parallel()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	load := func(env map[string]string) (config.Config, error) {
		env["BOXSNAP_DATA_DIR"] = t.TempDir()
		cfg, _, err := config.Load("serve", nil, func(k string) string { return env[k] }, io.Discard)
		return cfg, err
	}
	for env, want := range map[string]string{"BOXSNAP_QEMU_ACCEL": "--qemu-accel (BOXSNAP_QEMU_ACCEL) must be auto, kvm or tcg", "BOXSNAP_QEMU_SOCKET": "--qemu-socket (BOXSNAP_QEMU_SOCKET) must be the full path"} {
		if _, err := load(map[string]string{env: "fast"}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s=fast: got %v, want %q", env, err, want)
		}
	}
	cfg, err := load(map[string]string{})
	if err != nil {
		t.Fatal(err)
	}
	bes, err := backends(cfg, "test", logger, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, be := range bes {
		if be.Kind == "qemu" {
			t.Fatalf("without BOXSNAP_QEMU_SOCKET a QEMU backend is registered: %s", be.Label)
		}
	}

	d := qemutest.Libvirtd(t)
	cfg, err = load(map[string]string{"BOXSNAP_QEMU_SOCKET": d.Socket})
	if err != nil {
		t.Fatal(err)
	}
	bes, err = backends(cfg, "test", logger, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, be := range bes {
		if be.Kind != "qemu" {
			continue
		}
		found = true
		q, ok := be.Snap.(*qemu.Backend)
		if !ok || be.ID != "qemu" || be.Label != "QEMU on this host" || be.Note != q.AccelChoice(context.Background()).Why+"."+forKVM(q) || be.Boxes == nil {
			t.Fatalf("the QEMU backend is registered as %+v", be)
		}
		t.Cleanup(func() { _ = q.Close() })
		if sn := be.Snapshotting(qemu.KindLinux); sn == nil || !sn.OffersMemory() {
			t.Fatalf("the QEMU backend does not offer memory snapshots: %+v", sn)
		}
		if err := q.Ping(context.Background()); err != nil {
			t.Fatalf("the QEMU backend does not reach the libvirtd at %s: %v", d.Socket, err)
		}
	}
	if !found {
		t.Fatal("BOXSNAP_QEMU_SOCKET is set, and no QEMU backend is registered")
	}
}

// TestDemoQEMUWhereItCanBoot: the demo adds a QEMU backend only where the
// tests' guest is built and a libvirtd answers, its one template that
// guest; where either is missing its log says which, and there is none.
func TestDemoQEMUWhereItCanBoot(t *testing.T) {
	t.Parallel()
	var log strings.Builder
	logger := slog.New(slog.NewTextHandler(&log, nil))
	cfg, _, err := config.Load("serve", nil, func(k string) string { return map[string]string{"BOXSNAP_DATA_DIR": t.TempDir()}[k] }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Demo = true
	d := qemutest.Libvirtd(t)
	qemutest.Guest(t)
	cache, err := qemutest.CacheDir()
	if err != nil {
		t.Fatal(err)
	}
	if be := demoQEMUAt(cfg, "test", t.TempDir(), d.Socket, logger); be != nil || !strings.Contains(log.String(), "no QEMU guest is built here yet") {
		t.Errorf("with no guest built the demo made %v and logged %q", be, log.String())
	}
	log.Reset()
	if be := demoQEMUAt(cfg, "test", cache, "/nonexistent/libvirt-sock", logger); be != nil || !strings.Contains(log.String(), "no libvirtd answers on this host") {
		t.Errorf("with no libvirtd the demo made %v and logged %q", be, log.String())
	}
	be := demoQEMUAt(cfg, "test", cache, d.Socket, logger)
	if be == nil {
		t.Fatalf("with the guest built and a libvirtd the demo made no QEMU backend: %s", log.String())
	}
	t.Cleanup(func() { _ = be.Close() })
	if be.Snapshotting(qemu.KindLinux) == nil {
		t.Errorf("the demo's QEMU backend makes no Linux boxes")
	}
}

// TestDemoQEMUBoxFromTheRepository: make run looks for the tests' guest
// under ./.cache, a relative folder; the demo's QEMU box is made over it
// and starts. qemu-img read the base disk's relative path from the new
// disk's folder ("Could not open backing image"), so no make run ever made
// its QEMU box.
func TestDemoQEMUBoxFromTheRepository(t *testing.T) {
	ctx := context.Background()
	d := qemutest.Libvirtd(t)
	qemutest.Guest(t)
	cache, err := qemutest.CacheDir()
	if err != nil {
		t.Fatal(err)
	}
	cfg, _, err := config.Load("serve", nil, func(k string) string { return map[string]string{"BOXSNAP_DATA_DIR": t.TempDir()}[k] }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Demo = true
	t.Chdir(filepath.Dir(cache))
	var log strings.Builder
	be := demoQEMUAt(cfg, "test", filepath.Base(cache), d.Socket, slog.New(slog.NewTextHandler(&log, nil)))
	if be == nil {
		t.Fatalf("the demo made no QEMU backend from ./%s: %s", filepath.Base(cache), log.String())
	}
	t.Cleanup(func() { _ = be.Close() })
	g, err := be.Acquire(ctx, providers.BoxSpec{Box: providers.BoxIdentity{ID: "bxdemorel", Name: "still-fjord", Kind: qemu.KindLinux, Install: "test"}, Template: demo.QEMUTemplate})
	if err != nil {
		t.Fatalf("make the demo's QEMU box: %v", err)
	}
	t.Cleanup(func() { _ = be.Release(context.Background(), g) })
	if err := be.Start(ctx, g); err != nil {
		t.Fatalf("start the demo's QEMU box: %v", err)
	}
	if st, err := be.Status(ctx, g); err != nil || !st.Running {
		t.Fatalf("the demo's QEMU box after its start: %+v, %v", st, err)
	}
}

// forKVM is the note's fix for KVM, where it does not run.
func forKVM(q *qemu.Backend) string {
	if c := q.AccelChoice(context.Background()); c.Fix != "" {
		return " For KVM: " + c.Fix + "."
	}
	return ""
}
