package boot_test

import (
	"context"
	"io"
	"log/slog"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/app/boot"
	"github.com/boxsnap/boxsnap/providers/qemu/qemutest"
)

// TestDoctorSaysWhetherKVMOrTCGRunsQEMUGuests: with BOXSNAP_QEMU_SOCKET
// set, boxsnap doctor checks that libvirtd answers there and says whether
// KVM or TCG runs the backend's guests and why (under auto, the default:
// on a host whose CPU offers no vmx or svm, TCG, with the fix); without it,
// it says nothing of QEMU.
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
	want := []string{"ok    backend qemu", "libvirtd answers at " + d.Socket, "backend qemu accel"}
	if cpuinfo, _ := os.ReadFile("/proc/cpuinfo"); !regexp.MustCompile(`(?m)^flags\s*:.*\b(vmx|svm)\b`).Match(cpuinfo) {
		why := "this host has no /dev/kvm"
		if _, err := os.Stat("/dev/kvm"); err == nil {
			why = "/dev/kvm is here but the CPU offers no hardware virtualisation (no vmx or svm: a PVM host"
		}
		want = append(want, "TCG: "+why, "guests run under QEMU's own translation, slower", "for KVM, run boxsnap on a host whose CPU offers hardware virtualisation")
	}
	for _, want := range want {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("the doctor does not say %q:\n%s", want, out.String())
		}
	}
}
