package qemu

import (
	"context"
	"fmt"
)

// Check is one result of the doctor's checks of this backend.
type Check struct {
	Name   string
	OK     bool
	Detail string
	Fix    string
}

// Doctor checks that libvirtd answers and says whether KVM or TCG runs the
// backend's guests and why, with the fix.
func (b *Backend) Doctor(ctx context.Context) []Check {
	name := "backend " + b.cfg.ID
	if err := b.Ping(ctx); err != nil {
		return []Check{{Name: name, Detail: fmt.Sprintf("libvirtd at %s does not answer: %v", b.cfg.Socket, err),
			Fix: "start libvirtd (Debian: apt-get install --no-install-recommends libvirt-daemon-system qemu-system-x86 qemu-utils)"}}
	}
	return []Check{{Name: name, OK: true, Detail: "libvirtd answers at " + b.cfg.Socket},
		AccelCheck(name+" accel", b.AccelChoice(ctx))}
}

// AccelCheck is the doctor's line for an accelerator chosen: which runs
// guests and why, and how to get KVM where it does not run.
func AccelCheck(name string, c AccelChoice) Check {
	detail := c.Why
	if c.OK && c.Fix != "" {
		detail += "; for KVM, " + c.Fix
	}
	ch := Check{Name: name, OK: c.OK, Detail: detail}
	if !c.OK {
		ch.Fix = c.Fix
	}
	return ch
}

// AccelChoice answers the accelerator the backend's guests run under and
// why (ChooseAccel, on this host and its libvirtd). The host is read once;
// a choice made while libvirtd did not answer is made again at the next
// call.
func (b *Backend) AccelChoice(ctx context.Context) AccelChoice {
	b.accelMu.Lock()
	defer b.accelMu.Unlock()
	if b.accel != nil {
		return *b.accel
	}
	h := readHost(func() (string, error) {
		l, err := b.conn(ctx)
		if err != nil {
			return "", err
		}
		caps, err := l.ConnectGetCapabilities()
		if err != nil {
			return "", fmt.Errorf("libvirtd at %s: %w", b.cfg.Socket, err)
		}
		return caps, nil
	})
	c := ChooseAccel(b.cfg.Accel, h)
	if h.CapsErr == nil {
		b.accel = &c
	}
	return c
}
