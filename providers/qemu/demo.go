package qemu

import (
	"errors"
	"os"
	"path/filepath"
	"sort"
)

// TestGuestCmdline is the kernel command line of the guest the tests build
// from Debian's packages (package qemutest): its console on the first
// serial port, its shell on the second. The demo boots the same guest.
const TestGuestCmdline = "console=ttyS0 quiet loglevel=1 8250.nr_uarts=2 panic=-1"

// TestGuestReset is the identity reset's version that guest carries.
const TestGuestReset = 1

// ErrNoCachedGuest says that no test guest is built in the cache.
var ErrNoCachedGuest = errors.New("no QEMU test guest is built in the cache")

// CachedTestGuest answers the newest test guest built in cache
// (<cache>/qemu-guest/<hash>, whole once it holds "done") as a template of
// memoryMiB and one core; it never builds one (which takes minutes):
// ErrNoCachedGuest where none is there.
func CachedTestGuest(cache string, memoryMiB int) (Template, error) {
	done, err := filepath.Glob(filepath.Join(cache, "qemu-guest", "*", "done"))
	if err != nil {
		return Template{}, err
	}
	type built struct {
		dir string
		at  int64
	}
	var found []built
	for _, d := range done {
		fi, err := os.Stat(d)
		if err != nil {
			continue
		}
		found = append(found, built{filepath.Dir(d), fi.ModTime().UnixNano()})
	}
	if len(found) == 0 {
		return Template{}, ErrNoCachedGuest
	}
	sort.Slice(found, func(i, j int) bool { return found[i].at > found[j].at })
	dir := found[0].dir
	t := Template{Kernel: filepath.Join(dir, "vmlinuz"), Initrd: filepath.Join(dir, "initrd.img"), Disk: filepath.Join(dir, "base.qcow2"),
		Cmdline: TestGuestCmdline, MemoryMiB: memoryMiB, CPUs: 1, ResetVersion: TestGuestReset}
	for _, p := range []string{t.Kernel, t.Initrd, t.Disk} {
		if _, err := os.Stat(p); err != nil {
			return Template{}, ErrNoCachedGuest
		}
	}
	return t, nil
}
