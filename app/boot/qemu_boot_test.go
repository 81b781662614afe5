package boot_test

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/app/boot"
	"github.com/boxsnap/boxsnap/providers/qemu/qemutest"
)

// TestDoctorSaysWhetherKVMOrTCGRunsQEMUGuests: with BOXSNAP_QEMU_SOCKET
// set, boxsnap doctor checks that libvirtd answers there and says whether
// KVM or TCG runs the backend's guests; without it, it says nothing of
// QEMU.
func TestDoctorSaysWhetherKVMOrTCGRunsQEMUGuests(t *testing.T) {
	t.Parallel()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	var out strings.Builder
	boot.Doctor(context.Background(), testConfig(t, nil), logger, &out)
	if strings.Contains(out.String(), "qemu") {
		t.Fatalf("without BOXSNAP_QEMU_SOCKET the doctor checks a QEMU backend:\n%s", out.String())
	}
	d := qemutest.Libvirtd(t)
	out.Reset()
	boot.Doctor(context.Background(), testConfig(t, map[string]string{"BOXSNAP_QEMU_SOCKET": d.Socket}), logger, &out)
	for _, want := range []string{"ok    backend qemu", "libvirtd answers at " + d.Socket, "backend qemu accel", "guests run under TCG (QEMU's own translation, slower)"} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("the doctor does not say %q:\n%s", want, out.String())
		}
	}
}
