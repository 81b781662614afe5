package qemu

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/providertest"
)

// TestRoomIsReadAsDfReadsIt: the backend's folder on a file system that
// keeps half its blocks for root, holding 8 of its 64 MiB, is read as df
// reads it (as every other backend reads its room), not as past 50% full
// for the blocks kept: the room setting refused takes on such a host while
// df said it was half empty.
func TestRoomIsReadAsDfReadsIt(t *testing.T) {
	t.Parallel()
	mnt := providertest.Ext4(t, 64<<20, 50)
	if err := os.WriteFile(filepath.Join(mnt, "disk.qcow2"), make([]byte, 8<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	b, err := New(Config{ID: "qemu-test", Install: "intest", Dir: mnt, Templates: map[string]Template{"busybox": {}}})
	if err != nil {
		t.Fatal(err)
	}
	st, err := heldCopies{b}.room()
	if err != nil {
		t.Fatal(err)
	}
	want, err := providers.ReadRoom(mnt)
	if err != nil {
		t.Fatal(err)
	}
	if st.PercentFull != want.PercentFull() || st.FreeBytes != want.Free || st.PercentFull > 40 {
		t.Errorf("the backend's folder reads %.1f%% full with %d bytes free; df reads %.1f%% with %d", st.PercentFull, st.FreeBytes, want.PercentFull(), want.Free)
	}
}
