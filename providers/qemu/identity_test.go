package qemu_test

import (
	"context"
	"os"
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
	wantResetThenNetwork(t, bootRecord(t, b, fg))
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

// bootRecord answers the steps the guest's init recorded in this boot, in
// order.
func bootRecord(t *testing.T, b *qemu.Backend, g providers.Guest) []string {
	t.Helper()
	return strings.Split(strings.TrimSpace(sh(t, b, g, "cat /tmp/boxsnap-boot")), "\n")
}

// upInterfaces answers the guest's interfaces that have a device and are
// up now.
func upInterfaces(t *testing.T, b *qemu.Backend, g providers.Guest) string {
	t.Helper()
	return strings.TrimSpace(sh(t, b, g, `for i in /sys/class/net/*; do [ -e "$i/device" ] || continue; [ $(( $(cat "$i/flags") & 1 )) -eq 0 ] || echo "${i##*/}"; done; true`))
}

// wantResetThenNetwork fails unless the boot's record shows the reset
// beginning with every interface down, finishing, and only then the
// network coming up.
func wantResetThenNetwork(t *testing.T, rec []string) {
	t.Helper()
	want := []string{"reset began; interfaces up: none", "reset done", "network up"}
	if strings.Join(rec, "|") != strings.Join(want, "|") {
		t.Errorf("the guest recorded its boot as %q, want %q", rec, want)
	}
}

// TestIdentityResetFailsClosedInTheGuest: the guest's identity reset runs
// before any interface is up, and when it cannot write the machine ID the
// guest keeps its network down and says why on its console; once the
// reset can run again, the next boot brings the network up.
func TestIdentityResetFailsClosedInTheGuest(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := newBackend(t)
	g := newGuest(t, b, providertest.NewID("bx"))
	wantResetThenNetwork(t, bootRecord(t, b, g))
	if up := upInterfaces(t, b, g); up == "" {
		t.Fatalf("after a reset that ran, no interface is up")
	}
	own := readIdentity(t, b, g)

	// The marker gone, the reset runs at the next boot; a folder where it
	// writes the new machine ID makes that write fail.
	sh(t, b, g, "rm -f /etc/boxsnap/identity-marker && mkdir -p /etc/machine-id.new && sync")
	if err := b.Stop(ctx, g); err != nil {
		t.Fatal(err)
	}
	boot(t, b, g)
	rec := bootRecord(t, b, g)
	if want := []string{"reset began; interfaces up: none", "reset failed"}; strings.Join(rec, "|") != strings.Join(want, "|") {
		t.Errorf("with the machine ID unwritable, the guest recorded its boot as %q, want %q", rec, want)
	}
	if up := upInterfaces(t, b, g); up != "" {
		t.Errorf("the reset failed, yet these interfaces are up: %s", up)
	}
	console, err := os.ReadFile(b.ConsoleLog(g))
	if err != nil {
		t.Fatal(err)
	}
	for _, say := range []string{"identity reset failed: could not write the machine ID", "the network stays down"} {
		if !strings.Contains(string(console), say) {
			t.Errorf("the guest's console does not say %q", say)
		}
	}
	if strings.Contains(sh(t, b, g, "ls /etc/boxsnap"), "identity-marker") {
		t.Errorf("the failed reset wrote its marker")
	}
	if got := readIdentity(t, b, g); got.MachineID != own.MachineID {
		t.Errorf("the failed reset changed the machine ID to %s", got.MachineID)
	}

	// Fixed, the next boot resets and brings the network up.
	sh(t, b, g, "rmdir /etc/machine-id.new && sync")
	if err := b.Stop(ctx, g); err != nil {
		t.Fatal(err)
	}
	boot(t, b, g)
	wantResetThenNetwork(t, bootRecord(t, b, g))
	if up := upInterfaces(t, b, g); up == "" {
		t.Errorf("after the reset ran again, no interface is up")
	}
	if got := readIdentity(t, b, g); got.MachineID == own.MachineID {
		t.Errorf("the reset that ran kept the machine ID %s", own.MachineID)
	}
}
