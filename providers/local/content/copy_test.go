package content

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestAPlainCopyOfAFileEndingInZerosIsWhole: where the content is copied
// by reads and writes (between a box's own file system and the store's,
// where copy_file_range is refused), a file whose last blocks are zeros
// is copied whole, its size and every byte, not cut at its last data.
func TestAPlainCopyOfAFileEndingInZerosIsWhole(t *testing.T) {
	dir := t.TempDir()
	want := append(bytes.Repeat([]byte("cursor"), 10000), make([]byte, 3*zeroBlock+512)...)
	if err := os.WriteFile(filepath.Join(dir, "src"), want, 0o644); err != nil {
		t.Fatal(err)
	}
	src, err := os.Open(filepath.Join(dir, "src"))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.Create(filepath.Join(dir, "dst"))
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	c := NewCopier()
	c.noClone.Store(true)
	c.noRange.Store(true)
	if err := c.CopyData(dst, src); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dir, "dst"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("the copy holds %d bytes, want the file's %d", len(got), len(want))
	}
}
