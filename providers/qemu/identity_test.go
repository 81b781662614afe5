package qemu_test

import (
	"context"
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/providertest"
	"github.com/boxsnap/boxsnap/providers/qemu"
)

// identity is what the guest's identity reset makes: its machine ID, its
// SSH host key and its host ID.
type identity struct {
	MachineID, HostKey, HostID string
}

func readIdentity(t *testing.T, b *qemu.Backend, g providers.Guest) identity {
	t.Helper()
	out := sh(t, b, g, "cat /etc/machine-id; echo '|'; cat /etc/ssh/ssh_host_ed25519_key.pub; echo '|'; od -An -tx1 /etc/hostid | tr -d ' \\n'")
	f := strings.Split(out, "|")
	if len(f) != 3 {
		t.Fatalf("the guest's identity reads %q", out)
	}
	id := identity{strings.TrimSpace(f[0]), strings.TrimSpace(f[1]), strings.TrimSpace(f[2])}
	if len(id.MachineID) != 32 || !strings.HasPrefix(id.HostKey, "ssh-ed25519 ") || len(id.HostID) != 8 {
		t.Fatalf("the guest's identity is not whole: %+v", id)
	}
	return id
}

// TestIdentityResetInTheGuest: a fork's first boot runs boxsnap's identity
// reset before its network, so its machine ID, SSH host keys and host ID are
// new; its source, restarted three times, keeps its own.
func TestIdentityResetInTheGuest(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := newBackend(t)
	box := providertest.NewID("bx")
	g := newGuest(t, b, box)
	own := readIdentity(t, b, g)
	sh(t, b, g, "echo the source > /root/state && sync")

	// A snapshot of the stopped source, and a fork of it.
	if err := b.Stop(ctx, g); err != nil {
		t.Fatal(err)
	}
	ref, taken, _ := take(t, b, g, box, false)
	if taken.ResetVersion == 0 {
		t.Errorf("the snapshot says the guest carries no identity reset")
	}
	forkID := providertest.NewID("bx")
	fg, err := b.ForkSnapshot(ctx, ref, providers.BoxIdentity{ID: forkID, Name: "fork", Kind: qemu.KindLinux, Install: "intest"}, nil)
	if err != nil {
		t.Fatalf("ForkSnapshot: %v", err)
	}
	boot(t, b, fg)
	if got := strings.TrimSpace(sh(t, b, fg, "cat /root/state")); got != "the source" {
		t.Fatalf("the fork holds %q, want the snapshot's %q", got, "the source")
	}
	forked := readIdentity(t, b, fg)
	if forked.MachineID == own.MachineID {
		t.Errorf("the fork kept its source's machine ID %s", own.MachineID)
	}
	if forked.HostKey == own.HostKey {
		t.Errorf("the fork kept its source's SSH host key %s", own.HostKey)
	}
	if forked.HostID == own.HostID {
		t.Errorf("the fork kept its source's host ID %s", own.HostID)
	}

	for i := 1; i <= 3; i++ {
		if i > 1 {
			if err := b.Stop(ctx, g); err != nil {
				t.Fatal(err)
			}
		}
		boot(t, b, g)
		if got := readIdentity(t, b, g); got != own {
			t.Fatalf("after restart %d the source's identity is %+v, was %+v", i, got, own)
		}
	}
}
