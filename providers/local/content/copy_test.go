package content

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
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

// refusalsOf answers what was refused between dst's and src's file
// systems, and src's stat, as a copy between them finds it.
func (b *Copier) refusalsOf(dst, src *os.File, ss *unix.Stat_t) (*refusals, error) {
	var ds unix.Stat_t
	if err := unix.Fstat(int(dst.Fd()), &ds); err != nil {
		return nil, err
	}
	if err := unix.Fstat(int(src.Fd()), ss); err != nil {
		return nil, err
	}
	r, _ := b.refused.LoadOrStore(devPair{dst: ds.Dev, src: ss.Dev}, &refusals{})
	return r.(*refusals), nil
}

// TestACopyHashedNamesTheBytesItWrote: the hash and size CopyHashed
// answers are those of the bytes the copy holds, for a file of data, one
// with blocks of zeros inside and at its end, a sparse one (holes between
// its extents and at its end) and an empty one, whether the bytes passed
// through boxsnap (the plain copy, hashed as they are read) or the kernel
// copied them (copy_file_range, hashed after).
func TestACopyHashedNamesTheBytesItWrote(t *testing.T) {
	dir := t.TempDir()
	data := bytes.Repeat([]byte("shared tree "), 300000)
	withZeros := append(append(append([]byte{}, data[:3*zeroBlock+17]...), make([]byte, 5*zeroBlock)...), data[:2*hashBufSize+9]...)
	withZeros = append(withZeros, make([]byte, 2*zeroBlock+100)...)
	files := map[string]func(path string) error{
		"data":  func(p string) error { return os.WriteFile(p, data, 0o644) },
		"zeros": func(p string) error { return os.WriteFile(p, withZeros, 0o644) },
		"empty": func(p string) error { return os.WriteFile(p, nil, 0o644) },
		"sparse": func(p string) error {
			f, err := os.Create(p)
			if err != nil {
				return err
			}
			defer f.Close()
			for _, off := range []int64{1 << 20, 5 << 20, 9<<20 + 3} {
				if _, err := f.WriteAt(data[:70000], off); err != nil {
					return err
				}
			}
			return f.Truncate(12 << 20)
		},
	}
	for _, plain := range []bool{true, false} {
		for name, write := range files {
			from := filepath.Join(dir, name)
			if err := write(from); err != nil {
				t.Fatal(err)
			}
			want, err := os.ReadFile(from)
			if err != nil {
				t.Fatal(err)
			}
			src, err := os.Open(from)
			if err != nil {
				t.Fatal(err)
			}
			to := filepath.Join(dir, fmt.Sprintf("%s-%v", name, plain))
			dst, err := os.Create(to)
			if err != nil {
				t.Fatal(err)
			}
			c := NewCopier()
			var st unix.Stat_t
			way, err := c.refusalsOf(dst, src, &st)
			if err != nil {
				t.Fatal(err)
			}
			way.clone.Store(true)
			way.rng.Store(plain)
			h, n, err := c.CopyHashed(dst, src, &st)
			src.Close()
			dst.Close()
			if err != nil {
				t.Fatalf("%s (plain %v): %v", name, plain, err)
			}
			got, err := os.ReadFile(to)
			if err != nil {
				t.Fatal(err)
			}
			sum := sha256.Sum256(want)
			if !bytes.Equal(got, want) || h != hex.EncodeToString(sum[:]) || n != int64(len(want)) {
				t.Fatalf("%s (plain %v): the copy holds %d bytes (equal %v), hashed %s of %d bytes; want %d bytes hashing to %x",
					name, plain, len(got), bytes.Equal(got, want), h, n, len(want), sum)
			}
		}
	}
}
