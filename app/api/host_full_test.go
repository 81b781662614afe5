package api_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/local"
	"github.com/boxsnap/boxsnap/providers/providertest"
)

// TestABoxOnAFullHostSaysSo: a local box, a file system of its own, whose
// disk cannot grow toward its bound because the host's disk is full, says
// so in the API's box answer, in the words its page uses: "Box … cannot
// grow toward its disk bound of 1 GiB (its files hold …) because the
// host's disk is full: it runs on, but its writes fail until room is made
// on the host, and its files are as they were written." Once room is made
// on the host, the words go.
func TestABoxOnAFullHostSaysSo(t *testing.T) {
	t.Parallel()
	host := smallDisk(t, 448<<20)
	root := filepath.Join(host, "local")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	e := setupWith(t, coretest.Options{LocalRoot: root})
	if exact, why, _ := e.Local.DiskBounding(); !exact {
		if os.Getenv("CI") == "true" {
			t.Fatal("a box cannot be a file system of its own here: " + why)
		}
		t.Skip("a box cannot be a file system of its own here: " + why)
	}
	ctx := context.Background()
	big := snapshots.BoxTemplate{Name: "big", Backend: e.Core.Backends()[0].ID, Kind: "linux", Command: "sleep 600",
		Limits: providers.BoxLimits{DiskBytes: 1 << 30}}
	if err := e.Boxes.SaveTemplate(ctx, snapshots.Owner(), big); err != nil {
		t.Fatal(err)
	}
	b, err := e.Boxes.AcquireBox(ctx, snapshots.Owner(), snapshots.BoxRequest{Name: "on-full-host", Template: "big"})
	if err != nil {
		t.Fatal(err)
	}
	dir := e.Local.BoxDir(providers.Guest{Ref: b.GuestRef})
	chunk := bytes.Repeat([]byte{0xa5}, 1<<20)
	filler := filepath.Join(host, "filler")
	fillUntilFull(t, filler, chunk)
	fillUntilFull(t, filepath.Join(dir, "more"), chunk)

	var said string
	for deadline := time.Now().Add(30 * time.Second); ; {
		if said = e.call(t, "GET", "/boxes/on-full-host", e.owner, nil).must(t, 200).str("stopped"); said != "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("on a full host the API's box says nothing of its disk after 30 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	st, err := e.Boxes.BoxStatus(ctx, snapshots.Owner(), b.ID)
	if err != nil || st.DiskStop == nil || !st.DiskStop.HostFull {
		t.Fatalf("on a full host the box's status is %+v (%v), want its disk unable to grow", st.DiskStop, err)
	}
	contains(t, said, "Box on-full-host cannot grow toward its disk bound of 1 GiB (its files hold ",
		") because the host's disk is full: it runs on, but its writes fail until room is made on the host, and its files are as they were written.")
	if want := snapshots.DiskStopWords("on-full-host", st.DiskStop); said != want {
		t.Fatalf("the API's box says %q, want the page's words %q", said, want)
	}

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); ; {
		if said = e.call(t, "GET", "/boxes/on-full-host", e.owner, nil).must(t, 200).str("stopped"); said == "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("with room made on the host the API's box still says %q", said)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// smallDisk is a fresh ext4 file system of size bytes, loop-mounted for
// the test (as root), unmounted at its end after what is mounted in it.
func smallDisk(t *testing.T, size int64) string {
	t.Helper()
	mnt := providertest.Ext4(t, size, 0)
	t.Cleanup(func() { _ = local.UnmountAll(mnt) })
	return mnt
}

// fillUntilFull writes chunk to the file path until a write fails for
// want of room.
func fillUntilFull(t *testing.T, path string, chunk []byte) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for {
		if _, err := f.Write(chunk); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			return
		}
	}
}
