package qemu_test

import (
	"context"
	"testing"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/qemu"
	"github.com/boxsnap/boxsnap/providers/qemu/qemutest"
)

// TestTakeRecordsItsGuestsResetVersion: a take records the identity reset
// its guest carries, read from the domain's metadata: a snapshot of a guest
// with the reset says its version (fork-safe), one of a guest without it
// says none, in the take's answer and in the label the snapshot holds.
func TestTakeRecordsItsGuestsResetVersion(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b, _ := newBackendConfig(t, func(c *qemu.Config) {
		tpl := c.Templates[template]
		tpl.ResetVersion = 0
		c.Templates["no-reset"] = tpl
	})
	for _, c := range []struct {
		box, template string
		want          int
	}{{"bxreset", template, qemutest.ResetVersion}, {"bxnoreset", "no-reset", 0}} {
		g, err := b.Acquire(ctx, providers.BoxSpec{Box: providers.BoxIdentity{ID: c.box, Name: c.box, Kind: qemu.KindLinux, Install: "intest"}, Template: c.template})
		if err != nil {
			t.Fatalf("Acquire: %v", err)
		}
		label := providers.Label{Install: "intest", Box: c.box, Snapshot: "sn" + c.box}
		taken, err := b.Snapshot(ctx, g, providers.SnapshotTake{Label: label}, nil)
		if err != nil {
			t.Fatalf("Snapshot: %v", err)
		}
		if taken.ResetVersion != c.want {
			t.Errorf("a take of a guest from %s says reset version %d; want %d", c.template, taken.ResetVersion, c.want)
		}
		held, err := b.HeldSnapshots(ctx)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, h := range held {
			if h.Label.Snapshot == label.Snapshot {
				found = true
				if h.Label.ResetVersion != c.want {
					t.Errorf("the snapshot of a guest from %s holds reset version %d; want %d", c.template, h.Label.ResetVersion, c.want)
				}
			}
		}
		if !found {
			t.Errorf("the snapshot %s is not held", label.Snapshot)
		}
	}
}
