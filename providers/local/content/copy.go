package content

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// Copier copies files into the content store and hashes them: with a
// reflink where the file system makes one, else copy_file_range, else
// plain reads and writes, each refused way remembered for the two file
// systems it was refused between; and it keeps which content it found in
// the store since the last free.
type Copier struct {
	refused sync.Map // devPair to *refusals
	bufs    sync.Pool
	Present presentSet // content found in the store since the last free
	checked checkedSet // the stat of objects whose bytes were checked (NoteChecked)
}

// devPair names a copy's way: the file systems of its destination and
// its source. A box's own file system and the store's refuse what two
// files of the store's one file system take.
type devPair struct{ dst, src uint64 }

// refusals is what a way refused once, not asked again.
type refusals struct {
	clone atomic.Bool // a reflink
	rng   atomic.Bool // copy_file_range: plain reads and writes
}

// refusalsOf answers what was refused between dst's and src's file
// systems, and src's stat.
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

// NewCopier is a Copier that has found no content yet.
func NewCopier() *Copier {
	c := &Copier{}
	c.bufs.New = func() any { p := make([]byte, hashBufSize); return &p }
	return c
}

// copyChunk is how much one copy_file_range call asks for.
const copyChunk = 1 << 30

// hashBufSize is the read buffer for hashing content.
const hashBufSize = 1 << 20

// CopyData copies all of src into dst, an empty file, keeping src's holes:
// a reflink (FICLONE) where the file system shares blocks (btrfs, XFS); else
// a file whose blocks hold all its bytes is copied whole, and of a sparse
// one only its data extents (SEEK_DATA and SEEK_HOLE) are copied, with
// copy_file_range or a plain read and write at the same offsets, and dst's
// size is set last where a hole ends it, so a hole stays a hole in the copy. A block of zeros read
// by the plain copy is left a hole too. A 3 GiB file holding a few KiB of data
// costs a few KiB in the copy, not 3 GiB.
func (b *Copier) CopyData(dst, src *os.File) error {
	var st unix.Stat_t
	way, err := b.refusalsOf(dst, src, &st)
	if err != nil {
		return err
	}
	if !way.clone.Load() {
		err := unix.IoctlFileClone(int(dst.Fd()), int(src.Fd()))
		if err == nil {
			return nil
		}
		if errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.EXDEV) || errors.Is(err, unix.EINVAL) ||
			errors.Is(err, unix.ENOTTY) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EBADF) {
			// These file systems share no blocks: stop asking.
			way.clone.Store(true)
		} else {
			return fmt.Errorf("clone: %w", err)
		}
	}
	size := st.Size
	if st.Blocks*512 >= size {
		// No hole to keep (its blocks hold all its bytes): one extent,
		// and no truncate, which costs ext4 a journalled setattr a file.
		return b.copyExtent(way, dst, src, 0, size)
	}
	end := int64(0) // the end of what was copied
	for off := int64(0); off < size; {
		data, err := unix.Seek(int(src.Fd()), off, unix.SEEK_DATA)
		if errors.Is(err, unix.ENXIO) {
			break // only a hole is left
		}
		if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.EOPNOTSUPP) {
			data = off // no SEEK_DATA here: the rest is data
		} else if err != nil {
			return fmt.Errorf("seek data: %w", err)
		}
		hole, err := unix.Seek(int(src.Fd()), data, unix.SEEK_HOLE)
		if err != nil {
			hole = size
		}
		if hole > size {
			hole = size
		}
		if data >= hole {
			break
		}
		if err := b.copyExtent(way, dst, src, data, hole); err != nil {
			return err
		}
		off, end = hole, hole
	}
	if end == size {
		return nil
	}
	// The size last: a hole at the end is no data to copy.
	return dst.Truncate(size)
}

// copyExtent copies src's bytes [from, to) to the same offsets of dst, by
// a way not refused before (way).
func (b *Copier) copyExtent(way *refusals, dst, src *os.File, from, to int64) error {
	if !way.rng.Load() {
		roff, woff := from, from
		for roff < to {
			n, err := unix.CopyFileRange(int(src.Fd()), &roff, int(dst.Fd()), &woff, int(min(to-roff, copyChunk)), 0)
			if err != nil {
				if errors.Is(err, unix.EXDEV) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.EINVAL) {
					way.rng.Store(true)
					return b.plainExtent(dst, src, roff, to)
				}
				return fmt.Errorf("copy_file_range: %w", err)
			}
			if n == 0 {
				return nil // src is shorter than it was: the take's re-stat says so
			}
		}
		return nil
	}
	return b.plainExtent(dst, src, from, to)
}

// plainExtent copies src's bytes [from, to) to dst with reads and writes at
// the same offsets, writing no block that is all zeros (it stays a hole).
// A copy whose last blocks are zeros ends with dst reaching what it read,
// so a file ending in zeros is never copied short.
func (b *Copier) plainExtent(dst, src *os.File, from, to int64) (err error) {
	buf := b.bufs.Get().(*[]byte)
	defer b.bufs.Put(buf)
	read := from // the end of what was read, written or left a hole
	defer func() {
		if err != nil || read == from {
			return
		}
		st, serr := dst.Stat()
		if serr == nil && st.Size() < read {
			serr = dst.Truncate(read)
		}
		err = serr
	}()
	for off := from; off < to; {
		n, err := src.ReadAt((*buf)[:min(int64(len(*buf)), to-off)], off)
		if n > 0 {
			for i := 0; i < n; i += zeroBlock {
				j := min(i+zeroBlock, n)
				if allZero((*buf)[i:j]) {
					continue
				}
				if _, werr := dst.WriteAt((*buf)[i:j], off+int64(i)); werr != nil {
					return werr
				}
			}
			off += int64(n)
			read = off
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// zeroBlock is the size of a block the plain copy leaves a hole when it
// holds only zeros.
const zeroBlock = 4096

func allZero(p []byte) bool {
	for _, c := range p {
		if c != 0 {
			return false
		}
	}
	return true
}

// HashFile gives the SHA-256 of a file's content, read from offset 0.
func (b *Copier) HashFile(f *os.File) (string, int64, error) {
	buf := b.bufs.Get().(*[]byte)
	defer b.bufs.Put(buf)
	h := sha256.New()
	var off int64
	for {
		n, err := f.ReadAt(*buf, off)
		if n > 0 {
			h.Write((*buf)[:n])
			off += int64(n)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", off, err
		}
	}
	return hex.EncodeToString(h.Sum(nil)), off, nil
}

// HashPath hashes the file at path, never following a link.
func (b *Copier) HashPath(path string) (string, int64, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NOFOLLOW, 0)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	return b.HashFile(f)
}
