package qemu

import (
	"context"
	"fmt"
	"os"
	"strings"
)

// Check is one result of the doctor's checks of this backend.
type Check struct {
	Name   string
	OK     bool
	Detail string
	Fix    string
}

// kvmFix is how a host gets guests under KVM.
const kvmFix = "run boxsnap on a host whose CPU offers hardware virtualisation (vmx or svm in /proc/cpuinfo) with /dev/kvm, then set the backend's accelerator to kvm"

// Doctor checks that libvirtd answers and says whether KVM or TCG runs the
// backend's guests, with the fix.
func (b *Backend) Doctor(ctx context.Context) []Check {
	name := "backend " + b.cfg.ID
	if err := b.Ping(ctx); err != nil {
		return []Check{{Name: name, Detail: fmt.Sprintf("libvirtd at %s does not answer: %v", b.cfg.Socket, err),
			Fix: "start libvirtd (Debian: apt-get install --no-install-recommends libvirt-daemon-system qemu-system-x86 qemu-utils)"}}
	}
	cpuinfo, _ := os.ReadFile("/proc/cpuinfo")
	_, kvmErr := os.Stat("/dev/kvm")
	return []Check{{Name: name, OK: true, Detail: "libvirtd answers at " + b.cfg.Socket},
		AccelCheck(name+" accel", b.cfg.Accel, kvmErr == nil, string(cpuinfo))}
}

// AccelCheck says which accelerator runs guests: accel as configured, on a
// host with /dev/kvm present or not and whose CPU flags cpuinfo lists. KVM
// configured where the CPU offers no hardware virtualisation fails; TCG
// passes and names what KVM would need.
func AccelCheck(name, accel string, devKVM bool, cpuinfo string) Check {
	hw := cpuFlag(cpuinfo, "vmx") || cpuFlag(cpuinfo, "svm")
	switch {
	case accel == AccelKVM && devKVM && hw:
		return Check{Name: name, OK: true, Detail: "guests run under KVM (hardware virtualisation)"}
	case accel == AccelKVM:
		why := "/dev/kvm is missing"
		if devKVM {
			why = "/dev/kvm is here but the CPU offers no hardware virtualisation (no vmx or svm), so a stock guest kernel does not boot under it"
		}
		return Check{Name: name, Detail: "the accelerator is kvm, but " + why, Fix: "set the backend's accelerator to tcg, or " + kvmFix}
	case devKVM && hw:
		return Check{Name: name, OK: true, Detail: "guests run under TCG (QEMU's own translation, slower), though this host offers KVM: set the backend's accelerator to kvm"}
	default:
		why := "no /dev/kvm"
		if devKVM {
			why = "its /dev/kvm offers no hardware virtualisation (no vmx or svm)"
		}
		return Check{Name: name, OK: true, Detail: fmt.Sprintf("guests run under TCG (QEMU's own translation, slower): this host has %s; for KVM, %s", why, kvmFix)}
	}
}

func cpuFlag(cpuinfo, flag string) bool {
	for _, line := range strings.Split(cpuinfo, "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "flags" {
			for _, f := range strings.Fields(v) {
				if f == flag {
					return true
				}
			}
		}
	}
	return false
}
