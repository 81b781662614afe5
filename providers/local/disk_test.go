package local

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// allocated is what a file holds on disk: st_blocks times 512.
func allocated(t *testing.T, path string) int64 {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	return st.Blocks * 512
}

// fileHash is the SHA-256 of the file at path, read as a stream.
func fileHash(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// TestTakeKeepsSparseFiles: a take copies only a sparse file's data, and a
// restore gives back a sparse file with the same bytes.
func TestTakeKeepsSparseFiles(t *testing.T) {
	e := setup(t)
	p := filepath.Join(e.dir, "disk.img")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	const size = 1 << 30
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	data := bytes.Repeat([]byte("boxsnap"), 600) // about 4 KiB
	for _, off := range []int64{0, 300 << 20, size - int64(len(data))} {
		if _, err := f.WriteAt(data, off); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if a := allocated(t, p); a > 1<<20 {
		t.Fatalf("the test file itself holds %d bytes on disk", a)
	}
	want := fileHash(t, p)

	taken, ref := e.take(t)
	m, err := e.b.manifest(taken.Ref)
	if err != nil {
		t.Fatal(err)
	}
	var hash string
	for _, en := range m.Entries {
		if en.Path == "disk.img" {
			hash = en.Hash
		}
	}
	if hash == "" {
		t.Fatal("disk.img is not in the snapshot")
	}
	if a := allocated(t, e.b.contentPath(hash)); a > 1<<20 {
		t.Fatalf("the take's copy of a 1 GiB sparse file holding 12 KiB of data holds %d bytes on disk; want under 1 MiB", a)
	}

	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if err := e.restore(t, ref); err != nil {
		t.Fatalf("restore: %v", err)
	}
	if a := allocated(t, p); a > 1<<20 {
		t.Fatalf("the restored sparse file holds %d bytes on disk; want under 1 MiB", a)
	}
	if got := fileHash(t, p); got != want {
		t.Fatal("the restored sparse file's bytes differ from the ones taken")
	}
}
