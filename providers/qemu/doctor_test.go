package qemu

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestChooseAccel: auto chooses KVM only where /dev/kvm opens read-write,
// the CPU offers vmx or svm and libvirt lists the kvm domain type, and
// otherwise TCG, saying why with the fix; kvm and tcg force theirs, and
// kvm forced where it cannot run fails the doctor's check.
func TestChooseAccel(t *testing.T) {
	t.Parallel()
	pvm := "processor : 0\nflags : fpu vme de pse tsc msr pae hypervisor kvm_pvm\n"
	intel := "processor : 0\nflags : fpu vme de pse vmx tsc\n"
	amd := "processor : 0\nflags : fpu svm tsc\n"
	denied := fmt.Errorf("open /dev/kvm: %w", os.ErrPermission)
	missing := fmt.Errorf("open /dev/kvm: %w", os.ErrNotExist)
	down := errors.New("connect: no such file")
	for _, c := range []struct {
		asked string
		host  AccelHost
		accel string
		ok    bool
		say   string
		fix   string
	}{
		{AccelAuto, AccelHost{CPUInfo: intel, KVMDomain: true}, AccelKVM, true, "KVM: /dev/kvm opens", ""},
		{AccelAuto, AccelHost{CPUInfo: amd, KVMDomain: true}, AccelKVM, true, "KVM: /dev/kvm opens", ""},
		{AccelAuto, AccelHost{CPUInfo: pvm, KVMDomain: true}, AccelTCG, true, "TCG: /dev/kvm is here but the CPU offers no hardware virtualisation (no vmx or svm: a PVM host", "vmx or svm"},
		{AccelAuto, AccelHost{DevKVM: missing, CPUInfo: intel, KVMDomain: true}, AccelTCG, true, "TCG: this host has no /dev/kvm", "kvm_intel"},
		{AccelAuto, AccelHost{DevKVM: denied, CPUInfo: intel, KVMDomain: true}, AccelTCG, true, "TCG: /dev/kvm does not open read-write", "kvm group"},
		{AccelAuto, AccelHost{CPUInfo: intel}, AccelTCG, true, "TCG: libvirt lists no kvm domain type", "restart libvirtd"},
		{AccelAuto, AccelHost{CPUInfo: intel, CapsErr: down}, AccelTCG, true, "TCG: libvirt's capabilities could not be read", "start libvirtd"},
		{AccelKVM, AccelHost{CPUInfo: intel, KVMDomain: true}, AccelKVM, true, "KVM (set to kvm)", ""},
		{AccelKVM, AccelHost{CPUInfo: pvm, KVMDomain: true}, AccelKVM, false, "KVM is set, though guests may not boot under it here: /dev/kvm is here but the CPU offers no hardware virtualisation", "set BOXSNAP_QEMU_ACCEL to auto or tcg"},
		{AccelTCG, AccelHost{CPUInfo: intel, KVMDomain: true}, AccelTCG, true, "TCG (set to tcg)", "set BOXSNAP_QEMU_ACCEL to auto or kvm"},
		{AccelTCG, AccelHost{CPUInfo: pvm, KVMDomain: true}, AccelTCG, true, "KVM would not run here either", "vmx or svm"},
	} {
		got := ChooseAccel(c.asked, c.host)
		if got.Accel != c.accel || got.OK != c.ok || !strings.Contains(got.Why, c.say) || !strings.Contains(got.Fix, c.fix) || (c.fix == "") != (got.Fix == "") {
			t.Errorf("%s on %+v: %+v; want %s, ok %v, saying %q, fix naming %q", c.asked, c.host, got, c.accel, c.ok, c.say, c.fix)
		}
		check := AccelCheck("backend q accel", got)
		if check.OK != c.ok || !strings.Contains(check.Detail, c.say) || (!c.ok && check.Fix != got.Fix) || (c.ok && c.fix != "" && !strings.Contains(check.Detail, c.fix)) {
			t.Errorf("%s on %+v: the doctor says %+v", c.asked, c.host, check)
		}
	}
}

// TestKVMDomainReadsLibvirtCapabilities: the kvm domain type counts only
// under an x86_64 guest.
func TestKVMDomainReadsLibvirtCapabilities(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		caps string
		want bool
	}{
		{`<capabilities><guest><os_type>hvm</os_type><arch name='x86_64'><domain type='qemu'/><domain type='kvm'/></arch></guest></capabilities>`, true},
		{`<capabilities><guest><os_type>hvm</os_type><arch name='x86_64'><domain type='qemu'/></arch></guest></capabilities>`, false},
		{`<capabilities><guest><arch name='i686'><domain type='kvm'/></arch></guest><guest><arch name='x86_64'><domain type='qemu'/></arch></guest></capabilities>`, false},
	} {
		if got, err := kvmDomain(c.caps); err != nil || got != c.want {
			t.Errorf("kvmDomain(%s) = %v, %v; want %v", c.caps, got, err, c.want)
		}
	}
	if _, err := kvmDomain("<capabilities"); err == nil {
		t.Errorf("kvmDomain of a broken XML answers no error")
	}
}
