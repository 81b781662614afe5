package qemu

import (
	"encoding/xml"
	"errors"
	"fmt"
	"os"
	"strings"
)

// AccelAuto asks the backend to choose the accelerator: KVM where it runs
// guests on this host, TCG otherwise (see ChooseAccel).
const AccelAuto = "auto"

// AccelHost is what ChooseAccel reads of the host.
type AccelHost struct {
	// DevKVM is nil when /dev/kvm opens read-write, else why it does not.
	DevKVM error
	// CPUInfo is /proc/cpuinfo's text.
	CPUInfo string
	// KVMDomain says libvirt's capabilities list the kvm domain type for
	// x86_64 guests; CapsErr, when set, says why they could not be read.
	KVMDomain bool
	CapsErr   error
}

// AccelChoice is the accelerator the backend's guests run under, and why.
type AccelChoice struct {
	// Asked is the setting: AccelAuto, AccelKVM or AccelTCG.
	Asked string
	// Accel is what runs guests: AccelKVM or AccelTCG.
	Accel string
	// OK is false only where kvm is forced on a host where it cannot run
	// guests.
	OK bool
	// Why says which runs and why, in a sentence.
	Why string
	// Fix says how to get KVM (or, where kvm is forced and cannot run, how
	// to get guests running), empty where KVM runs.
	Fix string
}

// kvmFix is how a host gets guests under KVM.
const kvmFix = "run boxsnap on a host whose CPU offers hardware virtualisation (vmx or svm in /proc/cpuinfo), with the kvm_intel or kvm_amd module loaded so /dev/kvm opens read-write"

// ChooseAccel chooses the accelerator from the setting asked and the host.
// Under auto, KVM needs all three of: /dev/kvm opening read-write (the
// module is loaded and boxsnap may use it), the CPU offering hardware
// virtualisation (a vmx or svm flag), and libvirt listing the kvm domain
// type (its QEMU can use KVM). The CPU flag is checked because /dev/kvm
// alone proves little: on a PVM host (KVM inside a VM without nested
// virtualisation) /dev/kvm opens but the CPU has no vmx or svm, and a guest
// boots under it only with a PVM-enabled kernel, which stock guest kernels
// are not. Otherwise TCG, QEMU's own translation, which always works and is
// slower. kvm and tcg force their accelerator; kvm forced where it cannot
// run guests is not OK.
func ChooseAccel(asked string, h AccelHost) AccelChoice {
	hw := cpuFlag(h.CPUInfo, "vmx") || cpuFlag(h.CPUInfo, "svm")
	var why, fix string
	switch {
	case h.DevKVM != nil && errors.Is(h.DevKVM, os.ErrNotExist):
		why, fix = "this host has no /dev/kvm", kvmFix
	case h.DevKVM != nil:
		why, fix = fmt.Sprintf("/dev/kvm does not open read-write (%v)", h.DevKVM),
			"run boxsnap as a user in the kvm group (or as root), or "+kvmFix
	case !hw:
		why, fix = "/dev/kvm is here but the CPU offers no hardware virtualisation (no vmx or svm: a PVM host, whose guests need a PVM kernel)", kvmFix
	case h.CapsErr != nil:
		why, fix = fmt.Sprintf("libvirt's capabilities could not be read (%v)", h.CapsErr), "start libvirtd, then run boxsnap doctor again"
	case !h.KVMDomain:
		why, fix = "libvirt lists no kvm domain type for x86_64 guests (its QEMU cannot use /dev/kvm)",
			"install Debian's qemu-system-x86 and restart libvirtd so it finds KVM"
	}
	kvmRuns := why == ""
	c := AccelChoice{Asked: asked, OK: true}
	switch {
	case asked == AccelKVM && kvmRuns:
		c.Accel, c.Why = AccelKVM, "KVM (set to kvm): guests run under hardware virtualisation"
	case asked == AccelKVM:
		c.Accel, c.OK, c.Why = AccelKVM, false, "KVM is set, though guests may not boot under it here: "+why
		c.Fix = "set BOXSNAP_QEMU_ACCEL to auto or tcg, or " + fix
	case asked == AccelTCG && kvmRuns:
		c.Accel, c.Why = AccelTCG, "TCG (set to tcg): guests run under QEMU's own translation, slower, though this host offers KVM"
		c.Fix = "set BOXSNAP_QEMU_ACCEL to auto or kvm"
	case asked == AccelTCG:
		c.Accel, c.Why, c.Fix = AccelTCG, "TCG (set to tcg): guests run under QEMU's own translation, slower; KVM would not run here either: "+why, fix
	case kvmRuns:
		c.Accel, c.Why = AccelKVM, "KVM: /dev/kvm opens, the CPU offers hardware virtualisation and libvirt lists the kvm domain type"
	default:
		c.Accel, c.Why, c.Fix = AccelTCG, "TCG: "+why+"; guests run under QEMU's own translation, slower", fix
	}
	return c
}

// capabilities is the part of libvirt's capabilities XML ChooseAccel reads.
type capabilities struct {
	Guests []struct {
		Arch struct {
			Name    string `xml:"name,attr"`
			Domains []struct {
				Type string `xml:"type,attr"`
			} `xml:"domain"`
		} `xml:"arch"`
	} `xml:"guest"`
}

// kvmDomain reports whether libvirt's capabilities XML lists the kvm domain
// type for x86_64 guests.
func kvmDomain(capsXML string) (bool, error) {
	var c capabilities
	if err := xml.Unmarshal([]byte(capsXML), &c); err != nil {
		return false, fmt.Errorf("libvirt's capabilities: %w", err)
	}
	for _, g := range c.Guests {
		if g.Arch.Name != "x86_64" {
			continue
		}
		for _, d := range g.Arch.Domains {
			if d.Type == "kvm" {
				return true, nil
			}
		}
	}
	return false, nil
}

// readHost reads what ChooseAccel needs of this host, and of libvirtd
// through caps, which answers its capabilities XML.
func readHost(caps func() (string, error)) AccelHost {
	var h AccelHost
	if f, err := os.OpenFile("/dev/kvm", os.O_RDWR, 0); err != nil {
		h.DevKVM = err
	} else {
		_ = f.Close()
	}
	cpuinfo, _ := os.ReadFile("/proc/cpuinfo")
	h.CPUInfo = string(cpuinfo)
	x, err := caps()
	if err != nil {
		h.CapsErr = err
		return h
	}
	h.KVMDomain, h.CapsErr = kvmDomain(x)
	return h
}

// cpuFlag reports whether cpuinfo's flags lines list flag.
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
