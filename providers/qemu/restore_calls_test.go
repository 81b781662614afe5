package qemu_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/providertest"
	"github.com/boxsnap/boxsnap/providers/qemu"
	"github.com/boxsnap/boxsnap/providers/qemu/qemutest"
)

// libvirt's remote procedures the restore's steps may call (its
// remote_protocol.x), by name.
var procNames = map[uint32]string{
	4: "ConnectGetVersion", 9: "DomainCreate", 12: "DomainDestroy", 14: "DomainGetXMLDesc", 23: "DomainLookupByName",
	186: "DomainSnapshotGetXMLDesc", 189: "DomainSnapshotLookupByName", 192: "DomainRevertToSnapshot",
	194: "DomainGetBlockInfo", 212: "DomainGetState", 264: "DomainSetMetadata", 265: "DomainGetMetadata",
}

// remoteProgram is libvirt's remote program, whose calls carry the
// procedures above (its keepalive messages are another program's).
const remoteProgram = 0x20008086

// callWire is a unix socket the backend connects to in place of
// libvirtd's, passing every byte on to the real libvirtd and back, that
// records the remote procedure of each call the backend sends (a libvirt
// RPC message: its length, then its program, version, procedure and type,
// 0 for a call).
type callWire struct {
	socket string
	mu     sync.Mutex
	calls  []string
}

func newCallWire(t *testing.T, target string) *callWire {
	t.Helper()
	w := &callWire{socket: filepath.Join(t.TempDir(), "wire.sock")}
	ln, err := net.Listen("unix", w.socket)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("unix", target)
			if err != nil {
				_ = c.Close()
				continue
			}
			go func() { _, _ = io.Copy(c, s); _ = c.Close() }()
			go func() { w.pass(c, s); _ = s.Close() }()
		}
	}()
	return w
}

// pass copies the backend's messages to libvirtd, recording each call's
// procedure.
func (w *callWire) pass(from io.Reader, to io.Writer) {
	for {
		var n [4]byte
		if _, err := io.ReadFull(from, n[:]); err != nil {
			return
		}
		size := binary.BigEndian.Uint32(n[:])
		if size < 4+24 || size > 64<<20 {
			return
		}
		msg := make([]byte, size-4)
		if _, err := io.ReadFull(from, msg); err != nil {
			return
		}
		prog, proc, typ := binary.BigEndian.Uint32(msg), binary.BigEndian.Uint32(msg[8:]), binary.BigEndian.Uint32(msg[12:])
		if prog == remoteProgram && typ == 0 {
			name, ok := procNames[proc]
			if !ok {
				name = fmt.Sprintf("procedure %d", proc)
			}
			w.mu.Lock()
			w.calls = append(w.calls, name)
			w.mu.Unlock()
		}
		if _, err := to.Write(append(n[:], msg...)); err != nil {
			return
		}
	}
}

// take answers the calls recorded since the last take.
func (w *callWire) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	c := w.calls
	w.calls = nil
	return c
}

// TestQEMURestoreStepsMakeOnlyTheirCalls: each step of a disk restore asks
// libvirtd only what it needs, as virsh by hand does (a destroy, a revert,
// a start): the stop is one lookup and one destroy, the start one lookup
// and one create, the revert reads the snapshot's XML (memory or not) and
// boxsnap's mark before it and writes a fresh one after it (the scan for
// reverts made outside boxsnap, outsidemark.go: the state says whether
// the running domain's definition gets it too), and the size read back
// reads the domain's XML once. A stop of a stopped guest
// and a start of a running one are left as they are, and say so. Counted
// on the wire between the backend and a real libvirtd.
func TestQEMURestoreStepsMakeOnlyTheirCalls(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newCallWire(t, qemutest.Libvirtd(t).Socket)
	b, _ := newBackendConfig(t, func(c *qemu.Config) { c.Socket = w.socket })
	box := providertest.NewID("bx")
	g := newGuest(t, b, box)
	if err := b.Stop(ctx, g); err != nil {
		t.Fatal(err)
	}
	disk, _, _ := take(t, b, g, box, false)
	if err := b.Start(ctx, g); err != nil {
		t.Fatal(err)
	}
	w.take()

	step := func(s providers.RestoreStep) providers.RestoreProgress {
		t.Helper()
		p, err := b.RestoreSnapshot(ctx, g, disk, s, nil)
		if err != nil {
			t.Fatalf("restore step %s: %v", s, err)
		}
		return p
	}
	for _, c := range []struct {
		step providers.RestoreStep
		want []string
	}{
		{providers.StepStop, []string{"DomainLookupByName", "DomainDestroy"}},
		{providers.StepRollback, []string{"DomainLookupByName", "DomainSnapshotLookupByName", "DomainSnapshotGetXMLDesc",
			"DomainGetMetadata", "DomainRevertToSnapshot", "DomainGetState", "DomainSetMetadata"}},
		{providers.StepStart, []string{"DomainLookupByName", "DomainCreate"}},
		{providers.StepReadSize, []string{"DomainLookupByName", "DomainGetXMLDesc"}},
	} {
		p := step(c.step)
		if got := w.take(); !slices.Equal(got, c.want) {
			t.Errorf("the disk restore's %s step called %v, want %v", c.step, got, c.want)
		}
		switch c.step {
		case providers.StepStop:
			if !p.Ended {
				t.Error("the stop of a running guest says no process ended")
			}
		case providers.StepReadSize:
			if p.Size == nil || p.Size.DiskBytes != 1<<30 || p.Size.MemoryBytes != 256<<20 {
				t.Errorf("the size read back is %+v, want a 1 GiB disk and 256 MiB of memory", p.Size)
			}
		}
	}
	if on, err := b.Runs(ctx, g); err != nil || !on {
		t.Fatalf("after the restore's start the guest runs: %v (%v)", on, err)
	}

	// A start of a running guest leaves it running; a stop of a stopped
	// one says no process ended; neither fails.
	if err := b.Start(ctx, g); err != nil {
		t.Errorf("Start of a running guest: %v", err)
	}
	if p := step(providers.StepStop); !p.Ended {
		t.Error("the stop of a running guest says no process ended")
	}
	if p := step(providers.StepStop); p.Ended {
		t.Error("the stop of a stopped guest says its processes ended")
	}
	if on, err := b.Runs(ctx, g); err != nil || on {
		t.Fatalf("after two stops the guest runs: %v (%v)", on, err)
	}
	if err := b.Stop(ctx, g); err != nil {
		t.Errorf("Stop of a stopped guest: %v", err)
	}
	// A guest gone is said so, not taken as stopped.
	if err := b.Release(ctx, g); err != nil {
		t.Fatal(err)
	}
	if _, err := b.RestoreSnapshot(ctx, g, disk, providers.StepStop, nil); !errors.Is(err, providers.ErrNotFound) {
		t.Errorf("the stop of a released guest: %v, want not found", err)
	}
}
