package providertest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// Ext4 mounts a fresh ext4 file system of size bytes (a loop device) that
// keeps reservedPercent of its blocks for root, and unmounts it at the
// test's end: a folder whose room a test can fill or read. It skips the
// test where it cannot mount (not root), and fails it there under CI.
func Ext4(t *testing.T, size int64, reservedPercent int) string {
	t.Helper()
	if os.Geteuid() != 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("a loop mount needs root")
		}
		t.Skip("a loop mount needs root")
	}
	dir := t.TempDir()
	img, mnt := filepath.Join(dir, "fs.img"), filepath.Join(dir, "mnt")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(img, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(img, size); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mkfs.ext4", "-q", "-F", "-m", strconv.Itoa(reservedPercent), img).CombinedOutput(); err != nil {
		t.Fatalf("mkfs.ext4: %v: %s", err, out)
	}
	if out, err := exec.Command("mount", "-o", "loop", img, mnt).CombinedOutput(); err != nil {
		t.Fatalf("mount: %v: %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", "-l", mnt).Run() })
	return mnt
}
