package content

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
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
	var st unix.Stat_t
	way, err := c.refusalsOf(dst, src, &st)
	if err != nil {
		t.Fatal(err)
	}
	way.clone.Store(true)
	way.rng.Store(true)
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

// TestARefusalIsRememberedForItsTwoFileSystemsAlone: copy_file_range
// refused between two file systems (a box's own and the store's) is not
// asked again between them, but a copy between two files of one file
// system (the store's content into a shared tree) still asks for it, and
// copies every byte either way.
func TestARefusalIsRememberedForItsTwoFileSystemsAlone(t *testing.T) {
	here, other := t.TempDir(), "/dev/shm"
	var a, b unix.Stat_t
	if unix.Stat(here, &a) != nil || unix.Stat(other, &b) != nil || a.Dev == b.Dev {
		skipOrFail(t, "no second file system to copy from")
	}
	foreign, err := os.MkdirTemp(other, "copier-")
	if err != nil {
		skipOrFail(t, "no second file system to copy from: "+err.Error())
	}
	defer os.RemoveAll(foreign)
	want := bytes.Repeat([]byte("tree"), 50000)
	c := NewCopier()
	copyOnce := func(from, to string) *refusals {
		t.Helper()
		if err := os.WriteFile(from, want, 0o644); err != nil {
			t.Fatal(err)
		}
		src, err := os.Open(from)
		if err != nil {
			t.Fatal(err)
		}
		defer src.Close()
		dst, err := os.Create(to)
		if err != nil {
			t.Fatal(err)
		}
		defer dst.Close()
		if err := c.CopyData(dst, src); err != nil {
			t.Fatal(err)
		}
		if got, err := os.ReadFile(to); err != nil || !bytes.Equal(got, want) {
			t.Fatalf("the copy holds %d bytes (%v), want the file's %d", len(got), err, len(want))
		}
		var st unix.Stat_t
		way, err := c.refusalsOf(dst, src, &st)
		if err != nil {
			t.Fatal(err)
		}
		return way
	}
	across := copyOnce(filepath.Join(foreign, "src"), filepath.Join(here, "across"))
	if !across.rng.Load() {
		skipOrFail(t, "this kernel copies between these file systems with copy_file_range: nothing is refused")
	}
	if within := copyOnce(filepath.Join(here, "src"), filepath.Join(here, "within")); within.rng.Load() {
		t.Fatal("copy_file_range refused between two file systems is not asked for between two files of one")
	}
}

// skipOrFail skips a test this host cannot run, and fails it under CI=true,
// where every test must run.
func skipOrFail(t *testing.T, why string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatal(why)
	}
	t.Skip(why)
}
