package qemu

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"

	"github.com/boxsnap/boxsnap/providers"
)

// A look inside a snapshot reads its disk as the qcow2 internal snapshot
// holds it, without booting the guest and without mounting anything: qemu-img
// convert -l writes the snapshot's disk as a sparse raw file in a folder of
// the backend's own (the guest may run on: -U reads its disk unlocked, and
// the snapshot's clusters never change), e2fsck replays the file system's
// journal in that private copy (a snapshot of a running guest holds writes
// the journal has not put in place yet), and debugfs reads it. The box's
// disk now is read the same way, from its active layer. A copy is kept while
// a call reads it and deleted after the last.

// lookDirName is the folder in the backend's folder that holds the copies.
const lookDirName = "looks"

// ext4Magic is an ext4 superblock's magic number, at 1024+0x38.
const ext4Magic = 0xef53

// files is what the Backend's Browser holds: the raw copies being read, by
// what they copy. Its methods are the Browser's (files.go) and the copies'.
type files struct {
	b    *Backend
	mu   sync.Mutex
	held map[string]*lookUse
	seq  int
}

// lookUse is one raw copy and how many calls read it.
type lookUse struct {
	ready chan struct{}
	img   fsImage
	dir   string
	err   error
	users int
}

// lookAt gives the file system of the snapshot ref (now: of the box's disk
// now) and the function that lets it go.
func (f *files) lookAt(ctx context.Context, ref providers.SnapshotRef, now bool) (fsImage, func(), error) {
	key := "snapshot " + ref.Guest.Ref + " " + ref.Ref
	f.mu.Lock()
	if now {
		f.seq++ // never shared: the disk moves on
		key = fmt.Sprintf("now %s %d", ref.Guest.Ref, f.seq)
	}
	if f.held == nil {
		f.held = map[string]*lookUse{}
	}
	u := f.held[key]
	first := u == nil
	if first {
		u = &lookUse{ready: make(chan struct{})}
		f.held[key] = u
	}
	u.users++
	f.mu.Unlock()
	done := func() { f.unlook(key) }
	if first {
		u.img, u.dir, u.err = f.makeLook(ctx, ref, now)
		close(u.ready)
	}
	select {
	case <-u.ready:
	case <-ctx.Done():
		done()
		return fsImage{}, nil, ctx.Err()
	}
	if u.err != nil {
		done()
		return fsImage{}, nil, u.err
	}
	var once sync.Once
	return u.img, func() { once.Do(done) }, nil
}

// unlook lets a copy go, deleting it when no call reads it.
func (f *files) unlook(key string) {
	f.mu.Lock()
	u := f.held[key]
	if u == nil {
		f.mu.Unlock()
		return
	}
	u.users--
	if u.users > 0 {
		f.mu.Unlock()
		return
	}
	delete(f.held, key)
	f.mu.Unlock()
	if u.dir != "" {
		_ = os.RemoveAll(u.dir)
	}
}

// makeLook writes the raw copy and finds the file system in it.
func (f *files) makeLook(ctx context.Context, ref providers.SnapshotRef, now bool) (fsImage, string, error) {
	args := []string{"convert", "-U", "-f", "qcow2"}
	var file string
	if now {
		l, d, err := f.b.domain(ctx, ref.Guest)
		if err != nil {
			return fsImage{}, "", err
		}
		x, err := f.b.readDomain(l, d)
		if err != nil {
			return fsImage{}, "", err
		}
		if len(x.Devices.Disks) == 0 || x.Devices.Disks[0].Source.File == "" {
			return fsImage{}, "", fmt.Errorf("%s has no disk file", ref.Guest.Ref)
		}
		file = x.Devices.Disks[0].Source.File
	} else {
		src, err := f.b.source(ctx, ref)
		if err != nil {
			return fsImage{}, "", err
		}
		args, file = src.convertArgs(), src.file
	}
	top := filepath.Join(f.b.cfg.Dir, lookDirName)
	if err := os.MkdirAll(top, 0o700); err != nil {
		return fsImage{}, "", fmt.Errorf("make %s: %w", top, err)
	}
	dir, err := os.MkdirTemp(top, "look-")
	if err != nil {
		return fsImage{}, "", err
	}
	raw := filepath.Join(dir, "disk.raw")
	args = append(args, "-O", "raw", file, raw)
	if err := qemuImg(ctx, args...); err != nil {
		_ = os.RemoveAll(dir)
		return fsImage{}, "", err
	}
	off, err := fsOffset(raw)
	if err != nil {
		_ = os.RemoveAll(dir)
		return fsImage{}, "", err
	}
	img := fsImage{path: raw, offset: off}
	if err := replayJournal(ctx, img); err != nil {
		_ = os.RemoveAll(dir)
		return fsImage{}, "", err
	}
	return img, dir, nil
}

// replayJournal puts in place what the file system's journal holds, in the
// private copy (e2fsck's journal_only: nothing else is checked or fixed).
func replayJournal(ctx context.Context, img fsImage) error {
	cmd := exec.CommandContext(ctx, "e2fsck", "-E", "journal_only", "-y", img.spec())
	cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C"}
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() <= 2 {
		return nil // 1 and 2: the journal was replayed
	}
	if err != nil {
		return fmt.Errorf("e2fsck, to replay the snapshot's journal: %w: %s", err, debugfsErrors(out))
	}
	return nil
}

// fsOffset finds the ext4 file system in a raw disk: the whole disk, or
// the largest partition (MBR or GPT) that holds one. A disk with none is
// refused in words.
func fsOffset(raw string) (int64, error) {
	f, err := os.Open(raw)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	if isExt4(f, 0) {
		return 0, nil
	}
	var best, bestSize int64 = -1, 0
	for _, p := range partitions(f) {
		if p.size > bestSize && isExt4(f, p.start) {
			best, bestSize = p.start, p.size
		}
	}
	if best < 0 {
		return 0, &providers.RefusedError{Why: "The snapshot's disk holds no ext4 file system that boxsnap can read without booting the guest: restore or fork the snapshot to look inside it."}
	}
	return best, nil
}

// isExt4 says whether an ext4 superblock is at off.
func isExt4(r io.ReaderAt, off int64) bool {
	var m [2]byte
	if _, err := r.ReadAt(m[:], off+1024+0x38); err != nil {
		return false
	}
	return binary.LittleEndian.Uint16(m[:]) == ext4Magic
}

// part is one partition: where it starts and its size, in bytes.
type part struct{ start, size int64 }

// partitions reads a disk's partition table, GPT or MBR (primary
// partitions only), in 512-byte sectors. What it cannot read is no
// partition.
func partitions(r io.ReaderAt) []part {
	const sector = 512
	var mbr [sector]byte
	if _, err := r.ReadAt(mbr[:], 0); err != nil || mbr[510] != 0x55 || mbr[511] != 0xaa {
		return nil
	}
	le := binary.LittleEndian
	var hdr [92]byte
	if _, err := r.ReadAt(hdr[:], sector); err == nil && string(hdr[:8]) == "EFI PART" {
		at, n, size := int64(le.Uint64(hdr[72:])), le.Uint32(hdr[80:]), le.Uint32(hdr[84:])
		if size < 128 || size > 4096 || n > 1024 {
			return nil
		}
		var out []part
		e := make([]byte, size)
		for i := int64(0); i < int64(n); i++ {
			if _, err := r.ReadAt(e, at*sector+i*int64(size)); err != nil {
				break
			}
			first, last := int64(le.Uint64(e[32:])), int64(le.Uint64(e[40:]))
			if first > 0 && last >= first && first < 1<<40 && last < 1<<40 {
				out = append(out, part{start: first * sector, size: (last - first + 1) * sector})
			}
		}
		return out
	}
	var out []part
	for i := 0; i < 4; i++ {
		e := mbr[446+16*i:]
		typ, first, n := e[4], int64(le.Uint32(e[8:])), int64(le.Uint32(e[12:]))
		if typ != 0 && typ != 0xee && typ != 0x05 && typ != 0x0f && first > 0 && n > 0 {
			out = append(out, part{start: first * sector, size: n * sector})
		}
	}
	return out
}
