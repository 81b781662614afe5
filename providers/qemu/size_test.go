package qemu_test

import (
	"context"
	"testing"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/qemu"
)

// TestRunningGuestSizeAsLibvirtSays: the size the backend reads of a
// running guest (the restore's size read back, the status) says its disk's
// capacity as libvirt does, read from the disk's header, not from its QEMU.
func TestRunningGuestSizeAsLibvirtSays(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := newBackend(t)
	g, err := b.Acquire(ctx, providers.BoxSpec{Box: providers.BoxIdentity{ID: "bxsize", Name: "bxsize", Kind: qemu.KindLinux, Install: "intest"}, Template: template})
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	if err := b.Start(ctx, g); err != nil {
		t.Fatalf("Start: %v", err)
	}
	st, err := b.Status(ctx, g)
	if err != nil || !st.Running || st.Size == nil {
		t.Fatalf("the running guest's status is %+v (%v)", st, err)
	}
	l := virsh(t)
	d, err := l.DomainLookupByName(g.Ref)
	if err != nil {
		t.Fatal(err)
	}
	_, capacity, _, err := l.DomainGetBlockInfo(d, "vda", 0)
	if err != nil {
		t.Fatal(err)
	}
	if st.Size.DiskBytes != int64(capacity) || capacity == 0 {
		t.Fatalf("the backend says the disk holds %d bytes, libvirt %d", st.Size.DiskBytes, capacity)
	}
}
