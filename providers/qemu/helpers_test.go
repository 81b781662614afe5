package qemu_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/boxsnap/boxsnap/app/dbtest"
	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/providertest"
	"github.com/boxsnap/boxsnap/providers/qemu"
	"github.com/boxsnap/boxsnap/providers/qemu/qemutest"
)

// TestMain stops the private libvirtd after the tests, and the private
// PostgreSQL the core's tests start (dbtest); or, when a test starts this
// binary as a worker process, runs a boxsnap worker the test kills.
func TestMain(m *testing.M) {
	if os.Getenv(workerEnv) != "" {
		os.Exit(runWorkerProcess())
	}
	os.Exit(qemutest.Main(runFunc(func() int { return dbtest.Main(m) })))
}

// runFunc runs the tests as qemutest.Main asks.
type runFunc func() int

func (f runFunc) Run() int { return f() }

// template is the name of the test guest's template.
const template = "busybox"

// bootWait bounds one boot of the test guest under TCG on a shared host.
const bootWait = 3 * time.Minute

// newBackend gives a backend on the test binary's libvirtd, its boxes in a
// folder of its own (short: unix socket paths are bounded), whose domains
// are all released at the test's end.
func newBackend(t *testing.T) *qemu.Backend {
	t.Helper()
	b, _ := newBackendConfig(t)
	return b
}

// newBackendConfig is newBackend, with the configuration it was made from,
// changed by each of opts first.
func newBackendConfig(t *testing.T, opts ...func(*qemu.Config)) (*qemu.Backend, qemu.Config) {
	t.Helper()
	d := qemutest.Libvirtd(t)
	files := qemutest.Guest(t)
	dir, err := os.MkdirTemp("", "bsq-")
	if err != nil {
		t.Fatal(err)
	}
	cfg := qemu.Config{ID: "qemu-test", Socket: d.Socket, Install: "intest", Dir: dir,
		Templates: map[string]qemu.Template{template: {Kernel: files.Kernel, Initrd: files.Initrd, Disk: files.Disk,
			Cmdline: files.Cmdline, MemoryMiB: 256, CPUs: 1, ResetVersion: qemutest.ResetVersion}}}
	for _, o := range opts {
		o(&cfg)
	}
	b, err := qemu.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx := context.Background()
		list, _ := b.Domains(ctx)
		for _, g := range list {
			if err := b.Release(ctx, g); err != nil {
				t.Errorf("release %s at the test's end: %v", g.Ref, err)
			}
		}
		_ = b.Close()
		_ = os.RemoveAll(dir)
	})
	return b, cfg
}

// newGuest makes a box's guest from the test template and starts it, up to
// its ready line.
func newGuest(t *testing.T, b *qemu.Backend, box string) providers.Guest {
	t.Helper()
	ctx := context.Background()
	g, err := b.Acquire(ctx, providers.BoxSpec{Box: providers.BoxIdentity{ID: box, Name: box, Kind: qemu.KindLinux, Install: "intest"}, Template: template})
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	boot(t, b, g)
	return g
}

// boot starts the guest and waits for its ready line; it answers the boot
// ID.
func boot(t *testing.T, b *qemu.Backend, g providers.Guest) string {
	t.Helper()
	n := len(qemutest.Boots(b.ConsoleLog(g)))
	if err := b.Start(context.Background(), g); err != nil {
		t.Fatalf("Start %s: %v", g.Ref, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), bootWait)
	defer cancel()
	id, err := qemutest.WaitBoot(ctx, b.ConsoleLog(g), n)
	if err != nil {
		t.Fatalf("boot %s: %v", g.Ref, err)
	}
	return id
}

// sh runs a command in the running guest and answers its output; a failed
// command fails the test.
func sh(t *testing.T, b *qemu.Backend, g providers.Guest, cmd string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), bootWait)
	defer cancel()
	out, code, err := qemutest.Shell(ctx, b.SerialSocket(g), cmd)
	if err != nil {
		t.Fatalf("in %s: %v", g.Ref, err)
	}
	if code != 0 {
		t.Fatalf("in %s: %q exited %d: %s", g.Ref, cmd, code, out)
	}
	return out
}

// running starts the guest where it is stopped, up to its ready line.
func running(t *testing.T, b *qemu.Backend, g providers.Guest) {
	t.Helper()
	on, err := b.Runs(context.Background(), g)
	if err != nil {
		t.Fatalf("Runs %s: %v", g.Ref, err)
	}
	if !on {
		boot(t, b, g)
	}
}

func harness() providertest.Harness {
	return providertest.Harness{
		Kind:    qemu.KindLinux,
		Install: "intest",
		New: func(t *testing.T) (providers.Backend, providers.Boxes) {
			b := newBackend(t)
			return b, b
		},
		NewGuest: func(t *testing.T, pb providers.Backend, _ providers.Boxes, id string) providers.Guest {
			return newGuest(t, pb.(*qemu.Backend), id)
		},
		WriteState: func(t *testing.T, pb providers.Backend, g providers.Guest, state string) {
			b := pb.(*qemu.Backend)
			running(t, b, g)
			sh(t, b, g, fmt.Sprintf("printf '%%s' '%s' > /root/state && sync", strings.ReplaceAll(state, "'", "")))
		},
		ReadState: func(t *testing.T, pb providers.Backend, g providers.Guest) string {
			b := pb.(*qemu.Backend)
			running(t, b, g)
			return sh(t, b, g, "cat /root/state")
		},
		Unreachable: func(t *testing.T) providers.Backend {
			b, err := qemu.New(qemu.Config{ID: "qemu-gone", Socket: "/nonexistent/libvirt-sock", Install: "intest", Dir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			return b
		},
	}
}
