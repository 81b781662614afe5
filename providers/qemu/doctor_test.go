package qemu_test

import (
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/providers/qemu"
)

// TestDoctorSaysKVMOrTCG: the doctor says which accelerator runs guests,
// and where KVM is asked for but cannot run them, fails with the fix.
func TestDoctorSaysKVMOrTCG(t *testing.T) {
	t.Parallel()
	pvm := "processor : 0\nflags : fpu vme de pse tsc msr pae hypervisor kvm_pvm\n"
	hw := "processor : 0\nflags : fpu vme de pse vmx tsc\n"
	for _, c := range []struct {
		accel  string
		devKVM bool
		cpu    string
		ok     bool
		say    string
	}{
		{qemu.AccelTCG, true, pvm, true, "guests run under TCG"},
		{qemu.AccelTCG, false, pvm, true, "no /dev/kvm"},
		{qemu.AccelTCG, true, hw, true, "set the backend's accelerator to kvm"},
		{qemu.AccelKVM, true, hw, true, "guests run under KVM"},
		{qemu.AccelKVM, true, pvm, false, "no hardware virtualisation"},
		{qemu.AccelKVM, false, hw, false, "/dev/kvm is missing"},
	} {
		got := qemu.AccelCheck("backend q accel", c.accel, c.devKVM, c.cpu)
		if got.OK != c.ok || !strings.Contains(got.Detail, c.say) {
			t.Errorf("accel %s, /dev/kvm %v, cpu %q: %+v; want ok %v saying %q", c.accel, c.devKVM, c.cpu, got, c.ok, c.say)
		}
		if !got.OK && !strings.Contains(got.Fix, "tcg") {
			t.Errorf("accel %s, /dev/kvm %v: the fix %q does not name tcg", c.accel, c.devKVM, got.Fix)
		}
	}
}
