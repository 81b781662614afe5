package qemu

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestDiskCapacityFromTheHeader: a qcow2's virtual size is read from its
// header, as qemu-img made it; a file that is no qcow2 is refused, never
// taken for a size.
func TestDiskCapacityFromTheHeader(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	disk := filepath.Join(dir, "disk.qcow2")
	if err := qemuImg(context.Background(), "create", "-q", "-f", "qcow2", disk, "3G"); err != nil {
		t.Fatalf("qemu-img cannot make a disk here (Debian: qemu-utils): %v", err)
	}
	if n, err := diskCapacity(disk); err != nil || n != 3<<30 {
		t.Fatalf("the disk's capacity is %d (%v), want %d", n, err, int64(3<<30))
	}
	raw := filepath.Join(dir, "raw.img")
	if err := os.WriteFile(raw, make([]byte, 4096), 0o600); err != nil {
		t.Fatal(err)
	}
	if n, err := diskCapacity(raw); err == nil {
		t.Fatalf("a raw file was read as a qcow2 of %d bytes", n)
	}
}
