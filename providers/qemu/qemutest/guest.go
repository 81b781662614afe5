package qemutest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// GuestFiles is a bootable guest built from Debian's packages: the kernel
// unpacked from linux-image-amd64's dependency, an initramfs that loads its
// virtio and ext4 modules and hands over to the disk, and the disk itself, a
// busybox root file system on ext4 in a qcow2 whose init runs boxsnap's
// identity reset before the network.
type GuestFiles struct {
	Kernel  string
	Initrd  string
	Disk    string // qcow2, the base every box's disk is made over
	Cmdline string
	// Package is the kernel's Debian package, such as linux-image-6.1.0-57-amd64.
	Package string
}

// ResetVersion is the version of the identity reset the guest carries.
const ResetVersion = 1

// DiskBytes is the base disk's size.
const DiskBytes = 1 << 30

// modules are loaded in this order by the initramfs: each after what it
// needs.
var modules = []string{
	"drivers/virtio/virtio_ring.ko", "drivers/virtio/virtio.ko",
	"drivers/virtio/virtio_pci_legacy_dev.ko", "drivers/virtio/virtio_pci_modern_dev.ko", "drivers/virtio/virtio_pci.ko",
	"drivers/block/virtio_blk.ko",
	"lib/crc16.ko", "fs/mbcache.ko", "fs/jbd2/jbd2.ko", "crypto/crc32c_generic.ko", "fs/ext4/ext4.ko",
	"net/core/failover.ko", "drivers/net/net_failover.ko", "drivers/net/virtio_net.ko",
}

// initramfsInit loads the modules and switches to the disk.
const initramfsInit = `#!/bin/busybox sh
/bin/busybox mount -t proc proc /proc
/bin/busybox mount -t devtmpfs dev /dev
for m in $(/bin/busybox cat /modules.order); do /bin/busybox insmod /lib/modules/$m || echo "boxsnap-initramfs: insmod $m failed"; done
i=0
while [ ! -b /dev/vda ] && [ $i -lt 100 ]; do /bin/busybox usleep 50000; i=$((i+1)); done
/bin/busybox mount -t ext4 -o rw /dev/vda /newroot || { echo "boxsnap-initramfs: no root disk"; exec /bin/busybox sh; }
/bin/busybox umount /proc
/bin/busybox mount --move /dev /newroot/dev
exec /bin/busybox switch_root /newroot /sbin/init
`

// IdentityReset is boxsnap's identity reset as the guest runs it, before
// its network: when the MAC addresses of the guest's interfaces that have a
// device (not lo, not virtual ones), sorted, differ from those its marker
// holds (a fork, a copy), it makes a new machine ID, new SSH host keys and
// a new host ID, then writes the marker. It fails closed: any step that
// fails ends it with a non-zero status and a line on the console naming
// the step, and init then leaves the network down. It first records, in
// /tmp/boxsnap-boot, which of those interfaces were up when it began.
const IdentityReset = `#!/bin/sh
# boxsnap identity reset, version 1
set -eu
step="start"
trap 'rc=$?; [ "$rc" -eq 0 ] || echo "boxsnap: identity reset failed: could not $step (status $rc)" >&2' EXIT
marker=/etc/boxsnap/identity-marker
up=""
macs=""
for i in /sys/class/net/*; do
	[ -e "$i/device" ] || continue
	[ $(( $(cat "$i/flags") & 1 )) -eq 0 ] || up="$up ${i##*/}"
	macs="$macs$(cat "$i/address")
"
done
echo "reset began; interfaces up:${up:- none}" >> /tmp/boxsnap-boot
macs=$(printf '%s' "$macs" | grep -v '^00:00:00:00:00:00$' | sort | tr '\n' ' ' || true)
if [ -f "$marker" ] && [ "$(cat "$marker")" = "$macs" ]; then
	exit 0
fi
step="write the machine ID"
id=$(head -c 16 /dev/urandom | hexdump -v -e '16/1 "%02x"')
[ "${#id}" -eq 32 ]
printf '%s\n' "$id" > /etc/machine-id.new
mv -f /etc/machine-id.new /etc/machine-id
if ls /etc/ssh/ssh_host_*_key >/dev/null 2>&1; then
	step="write the SSH host keys"
	rm -f /etc/ssh/ssh_host_*
	ssh-keygen -q -t ed25519 -N '' -f /etc/ssh/ssh_host_ed25519_key
fi
step="write the host ID"
head -c 4 /dev/urandom > /etc/hostid.new
mv -f /etc/hostid.new /etc/hostid
step="write the marker"
printf '%s' "$macs" > "$marker.new"
mv -f "$marker.new" "$marker"
sync
echo "boxsnap: identity reset ran for $macs"
`

// guestInit is the disk's /sbin/init: the identity reset first, with every
// interface still down; only when it succeeds, the network. Then its
// access read from its access disk (vdb, uncached) into /tmp/boxsnap-access
// for its processes, a counter that counts each second (in memory only:
// its value in /tmp/counter, each value appended to /tmp/counts), the
// ready line on the console (ttyS0) and a shell on the second serial port
// (ttyS1) for the tests. /tmp/boxsnap-boot records the boot's steps in
// order. When the reset fails the guest says so on its console, records
// it, and keeps the network down; the shell still answers, so a person can
// see why.
const guestInit = `#!/bin/sh
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t tmpfs tmp /tmp
mount -o remount,rw /
if /etc/boxsnap/identity-reset >/dev/ttyS0 2>&1; then
	echo "reset done" >> /tmp/boxsnap-boot
	net=up
else
	echo "reset failed" >> /tmp/boxsnap-boot
	echo "boxsnap: the identity reset failed, so the network stays down" > /dev/ttyS0
	net=down
fi
dd if=/dev/vdb iflag=direct bs=65536 count=1 2>/dev/null | tr -d '\000' > /tmp/boxsnap-access
ip link set lo up
if [ "$net" = up ]; then
	for i in /sys/class/net/*; do ip link set "${i##*/}" up; done
	echo "network up" >> /tmp/boxsnap-boot
fi
( n=0; while :; do n=$((n+1)); echo "$n" >> /tmp/counts; echo "$n" > /tmp/counter.new; mv /tmp/counter.new /tmp/counter; sleep 1; done ) &
echo "boxsnap-ready $(cat /proc/sys/kernel/random/boot_id)" > /dev/ttyS0
while :; do
	stty -F /dev/ttyS1 raw -echo 2>/dev/null
	# A pipe, not the tty, is the shell's input: no prompt, no line editing.
	setsid sh -c 'cat /dev/ttyS1 | sh >/dev/ttyS1 2>&1'
done
`

// Cmdline is the kernel command line the guest boots with.
const Cmdline = "console=ttyS0 quiet loglevel=1 8250.nr_uarts=2 panic=-1"

// BuildGuest builds the guest once into a folder of cache named for what it
// is made of (the kernel's package and this file's scripts), and answers
// its files; a later call finds them there.
func BuildGuest(ctx context.Context, cache string) (GuestFiles, error) {
	pkg, err := kernelPackage(ctx)
	if err != nil {
		return GuestFiles{}, err
	}
	h := sha256.Sum256([]byte(pkg + initramfsInit + IdentityReset + guestInit + Cmdline + strings.Join(modules, ",")))
	dir := filepath.Join(cache, "qemu-guest", hex.EncodeToString(h[:6]))
	g := GuestFiles{Kernel: filepath.Join(dir, "vmlinuz"), Initrd: filepath.Join(dir, "initrd.img"), Disk: filepath.Join(dir, "base.qcow2"), Cmdline: Cmdline, Package: pkg}
	if _, err := os.Stat(filepath.Join(dir, "done")); err == nil {
		return g, nil
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return g, err
	}
	work, err := os.MkdirTemp(cache, "qemu-guest-build-")
	if err != nil {
		return g, err
	}
	defer func() { _ = os.RemoveAll(work) }()
	if err := build(ctx, work, pkg); err != nil {
		return g, fmt.Errorf("build the guest: %w", err)
	}
	if err := os.WriteFile(filepath.Join(work, "out", "done"), []byte(pkg+"\n"), 0o644); err != nil {
		return g, err
	}
	// Guests built from earlier kernels or scripts go once they are a week
	// old: a cache shared by worktrees on other scripts keeps theirs, whose
	// running tests' boxes stand on their base disks.
	old, _ := filepath.Glob(filepath.Join(cache, "qemu-guest", "*"))
	for _, o := range old {
		if stale(o) {
			_ = os.RemoveAll(o)
		}
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return g, err
	}
	if err := os.Rename(filepath.Join(work, "out"), dir); err != nil {
		return g, err
	}
	return g, nil
}

// keepOldGuests is how long a guest built from other scripts or another
// kernel stays in the cache.
const keepOldGuests = 7 * 24 * time.Hour

// stale reports whether a built guest's folder was done more than
// keepOldGuests ago.
func stale(dir string) bool {
	fi, err := os.Stat(filepath.Join(dir, "done"))
	return err == nil && time.Since(fi.ModTime()) > keepOldGuests
}

var kernelDep = regexp.MustCompile(`Depends: (linux-image-[0-9][^\s]*-amd64)`)

// kernelPackage is the kernel package linux-image-amd64 depends on today.
func kernelPackage(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, "apt-cache", "depends", "linux-image-amd64").Output()
	if err != nil {
		return "", fmt.Errorf("apt-cache depends linux-image-amd64: %w", err)
	}
	m := kernelDep.FindStringSubmatch(string(out))
	if m == nil {
		return "", fmt.Errorf("linux-image-amd64 names no kernel package: %q", out)
	}
	return m[1], nil
}

func run(ctx context.Context, dir string, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, lastLines(out.String(), 5))
	}
	return nil
}

func build(ctx context.Context, work, pkg string) error {
	out := filepath.Join(work, "out")
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	mods, err := buildKernel(ctx, work, pkg, out)
	if err != nil {
		return err
	}
	busybox := "/bin/busybox"
	if err := staticBusybox(busybox); err != nil {
		return err
	}
	if err := buildInitramfs(ctx, work, busybox, mods); err != nil {
		return err
	}
	root := filepath.Join(work, "root")
	if err := buildRoot(ctx, root, busybox); err != nil {
		return err
	}
	return buildDisk(ctx, work, root, out)
}

// buildKernel puts Debian's kernel in out and answers the folder of its
// modules.
func buildKernel(ctx context.Context, work, pkg, out string) (string, error) {
	// The kernel: Debian's package, downloaded by apt and unpacked here,
	// never installed.
	if err := run(ctx, work, "apt-get", "download", "-q", pkg); err != nil {
		return "", err
	}
	debs, _ := filepath.Glob(filepath.Join(work, pkg+"_*.deb"))
	if len(debs) != 1 {
		return "", fmt.Errorf("apt-get download %s left %d packages", pkg, len(debs))
	}
	kx := filepath.Join(work, "kernel")
	if err := run(ctx, work, "dpkg-deb", "-x", debs[0], kx); err != nil {
		return "", err
	}
	vmlinuz, _ := filepath.Glob(filepath.Join(kx, "boot", "vmlinuz-*"))
	mods, _ := filepath.Glob(filepath.Join(kx, "lib", "modules", "*", "kernel"))
	if len(vmlinuz) != 1 || len(mods) != 1 {
		return "", fmt.Errorf("%s holds %d kernels and %d module folders", pkg, len(vmlinuz), len(mods))
	}
	if err := copyFile(vmlinuz[0], filepath.Join(out, "vmlinuz"), 0o644); err != nil {
		return "", err
	}
	return mods[0], nil
}

// buildInitramfs makes out/initrd.img.
func buildInitramfs(ctx context.Context, work, busybox, mods string) error {
	// The initramfs: busybox, the modules and the init that mounts the disk.
	ird := filepath.Join(work, "initramfs")
	for _, d := range []string{"bin", "proc", "dev", "newroot", "lib/modules"} {
		if err := os.MkdirAll(filepath.Join(ird, d), 0o755); err != nil {
			return err
		}
	}
	if err := copyFile(busybox, filepath.Join(ird, "bin", "busybox"), 0o755); err != nil {
		return err
	}
	if err := os.Symlink("busybox", filepath.Join(ird, "bin", "sh")); err != nil {
		return err
	}
	var order []string
	for _, m := range modules {
		base := filepath.Base(m)
		if err := copyFile(filepath.Join(mods, m), filepath.Join(ird, "lib", "modules", base), 0o644); err != nil {
			return err
		}
		order = append(order, base)
	}
	if err := os.WriteFile(filepath.Join(ird, "modules.order"), []byte(strings.Join(order, "\n")+"\n"), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(ird, "init"), []byte(initramfsInit), 0o755); err != nil {
		return err
	}
	if err := run(ctx, ird, "/bin/sh", "-c", "find . | busybox cpio -o -H newc 2>/dev/null | gzip -1 > ../out/initrd.img"); err != nil {
		return err
	}
	return nil
}

// buildRoot fills root with the guest's files.
func buildRoot(ctx context.Context, root, busybox string) error {
	// The disk: busybox with every applet linked, ssh-keygen with its
	// libraries (from the host's Debian openssh-client), the init and the
	// identity reset, a machine ID, host keys and a host ID of its own.
	for _, d := range []string{"bin", "sbin", "usr/bin", "usr/sbin", "etc/boxsnap", "etc/ssh", "proc", "sys", "dev", "tmp", "root", "var/lib/boxsnap"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			return err
		}
	}
	if err := copyFile(busybox, filepath.Join(root, "bin", "busybox"), 0o755); err != nil {
		return err
	}
	list, err := exec.CommandContext(ctx, busybox, "--list-full").Output()
	if err != nil {
		return fmt.Errorf("busybox --list-full: %w", err)
	}
	for _, a := range strings.Fields(string(list)) {
		if a == "bin/busybox" || a == "sbin/init" {
			continue
		}
		p := filepath.Join(root, a)
		_ = os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.Symlink("/bin/busybox", p); err != nil && !errors.Is(err, os.ErrExist) {
			return err
		}
	}
	if err := copyWithLibraries(ctx, "/usr/bin/ssh-keygen", root); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(root, "sbin", "init"), []byte(guestInit), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(root, "etc", "boxsnap", "identity-reset"), []byte(IdentityReset), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(root, "etc", "boxsnap", "reset-version"), []byte(fmt.Sprintf("%d\n", ResetVersion)), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(root, "etc", "passwd"), []byte("root:x:0:0:root:/root:/bin/sh\n"), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(root, "etc", "group"), []byte("root:x:0:\n"), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(root, "etc", "hostname"), []byte("boxsnap-guest\n"), 0o644); err != nil {
		return err
	}
	// The base's own identity; its marker is absent, so a box's first boot
	// (its MAC addresses are its own) makes the box's.
	if err := run(ctx, root, "/bin/sh", "-c", "head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \\n' > etc/machine-id && echo >> etc/machine-id && head -c 4 /dev/urandom > etc/hostid && ssh-keygen -q -t ed25519 -N '' -f etc/ssh/ssh_host_ed25519_key"); err != nil {
		return err
	}
	return nil
}

// buildDisk makes out/base.qcow2 from root.
func buildDisk(ctx context.Context, work, root, out string) error {
	raw := filepath.Join(work, "base.raw")
	if err := run(ctx, work, "mkfs.ext4", "-q", "-F", "-L", "boxsnap-root", "-d", root, raw, fmt.Sprintf("%dM", DiskBytes>>20)); err != nil {
		return err
	}
	if err := run(ctx, work, "qemu-img", "convert", "-q", "-f", "raw", "-O", "qcow2", raw, filepath.Join(out, "base.qcow2")); err != nil {
		return err
	}
	return nil
}

// staticBusybox checks the busybox is Debian's static one, which runs in a
// guest with no libraries.
func staticBusybox(p string) error {
	f, err := elf.Open(p)
	if err != nil {
		return fmt.Errorf("Debian's busybox-static is needed (apt-get install busybox-static): %w", err)
	}
	defer func() { _ = f.Close() }()
	for _, prog := range f.Progs {
		if prog.Type == elf.PT_INTERP {
			return fmt.Errorf("%s is not static: install Debian's busybox-static", p)
		}
	}
	return nil
}

// copyWithLibraries copies a program and the shared libraries ldd names for
// it, each at its own path under root.
func copyWithLibraries(ctx context.Context, prog, root string) error {
	out, err := exec.CommandContext(ctx, "ldd", prog).Output()
	if err != nil {
		return fmt.Errorf("ldd %s: %w", prog, err)
	}
	files := []string{prog}
	for _, line := range strings.Split(string(out), "\n") {
		for _, f := range strings.Fields(line) {
			if strings.HasPrefix(f, "/") {
				files = append(files, f)
			}
		}
	}
	for _, f := range files {
		real, err := filepath.EvalSymlinks(f)
		if err != nil {
			return err
		}
		if err := copyFile(real, filepath.Join(root, f), 0o755); err != nil {
			return err
		}
	}
	return nil
}

func copyFile(from, to string, mode os.FileMode) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return err
	}
	return os.WriteFile(to, b, mode)
}
