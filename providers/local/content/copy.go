package content

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
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
	if err := unix.Fstat(int(src.Fd()), &st); err != nil {
		return err
	}
	c := copying{Copier: b, dst: dst, src: src}
	return c.copy(&st)
}

// CopyHashed copies all of src, stat'ed as st, into dst as CopyData does,
// and answers the SHA-256 of what it copied and how many bytes that was
// (src's size, unless src shrank while it was read). Where the bytes pass
// through boxsnap (the plain copy, as between a box's own file system and
// the store's), each is read once and hashed as it is written; where the
// kernel copied them (a reflink, copy_file_range), dst is read and hashed
// after.
func (b *Copier) CopyHashed(dst, src *os.File, st *unix.Stat_t) (string, int64, error) {
	c := copying{Copier: b, dst: dst, src: src, h: sha256.New()}
	if err := c.copy(st); err != nil {
		return "", 0, err
	}
	if c.kernel {
		return b.HashFile(dst)
	}
	return hex.EncodeToString(c.h.Sum(nil)), c.hashed, nil
}

// copying is one copy of src into dst: with h set, what the plain copy
// reads is hashed in order, holes as zeros, unless the kernel copied some
// of it (kernel).
type copying struct {
	*Copier
	dst, src *os.File
	way      *refusals
	h        hash.Hash
	hashed   int64 // the bytes h has taken, from offset 0
	kernel   bool  // some bytes were copied by the kernel, unseen by h
	short    bool  // src ended before its stat's size
	size     int64 // dst's size as this copy left it
}

func (c *copying) copy(st *unix.Stat_t) error {
	var ds unix.Stat_t
	if err := unix.Fstat(int(c.dst.Fd()), &ds); err != nil {
		return err
	}
	c.size = ds.Size
	r, _ := c.refused.LoadOrStore(devPair{dst: ds.Dev, src: uint64(st.Dev)}, &refusals{})
	c.way = r.(*refusals)
	if !c.way.clone.Load() {
		err := unix.IoctlFileClone(int(c.dst.Fd()), int(c.src.Fd()))
		if err == nil {
			c.kernel = true
			return nil
		}
		if errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.EXDEV) || errors.Is(err, unix.EINVAL) ||
			errors.Is(err, unix.ENOTTY) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EBADF) {
			// These file systems share no blocks: stop asking.
			c.way.clone.Store(true)
		} else {
			return fmt.Errorf("clone: %w", err)
		}
	}
	size := st.Size
	if st.Blocks*512 >= size {
		// No hole to keep (its blocks hold all its bytes): one extent,
		// and no truncate, which costs ext4 a journalled setattr a file.
		return c.extent(0, size)
	}
	end := int64(0) // the end of what was copied
	for off := int64(0); off < size && !c.short; {
		data, err := unix.Seek(int(c.src.Fd()), off, unix.SEEK_DATA)
		if errors.Is(err, unix.ENXIO) {
			break // only a hole is left
		}
		if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.EOPNOTSUPP) {
			data = off // no SEEK_DATA here: the rest is data
		} else if err != nil {
			return fmt.Errorf("seek data: %w", err)
		}
		hole, err := unix.Seek(int(c.src.Fd()), data, unix.SEEK_HOLE)
		if err != nil {
			hole = size
		}
		if hole > size {
			hole = size
		}
		if data >= hole {
			break
		}
		c.hashZeros(data)
		if err := c.extent(data, hole); err != nil {
			return err
		}
		off, end = hole, hole
	}
	if c.short {
		return nil // the caller's check of what was hashed says so
	}
	c.hashZeros(size)
	if end == size {
		return nil
	}
	// The size last: a hole at the end is no data to copy.
	return c.dst.Truncate(size)
}

// hashZeros hashes the hole up to offset to as the zeros it reads as.
func (c *copying) hashZeros(to int64) {
	if c.h == nil {
		return
	}
	for c.hashed < to {
		n := min(to-c.hashed, int64(len(zeros)))
		c.h.Write(zeros[:n])
		c.hashed += n
	}
}

// zeros is what a hole hashes as.
var zeros [64 << 10]byte

// extent copies src's bytes [from, to) to the same offsets of dst, by a
// way not refused before.
func (c *copying) extent(from, to int64) error {
	if !c.way.rng.Load() {
		roff, woff := from, from
		for roff < to {
			n, err := unix.CopyFileRange(int(c.src.Fd()), &roff, int(c.dst.Fd()), &woff, int(min(to-roff, copyChunk)), 0)
			if err != nil {
				if errors.Is(err, unix.EXDEV) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.EINVAL) {
					c.way.rng.Store(true)
					return c.plain(roff, to)
				}
				return fmt.Errorf("copy_file_range: %w", err)
			}
			c.kernel = true
			if n == 0 {
				c.short = true
				return nil // src is shorter than it was: the take's re-stat says so
			}
		}
		return nil
	}
	return c.plain(from, to)
}

// plain copies src's bytes [from, to) to dst with reads and writes at the
// same offsets, hashing them as they are read, and writing no block that
// is all zeros (it stays a hole): each run of blocks with data is one
// write. A copy whose last blocks are zeros ends with dst reaching what it
// read, so a file ending in zeros is never copied short.
func (c *copying) plain(from, to int64) error {
	buf := c.bufs.Get().(*[]byte)
	defer c.bufs.Put(buf)
	off := from
	for off < to {
		n, err := c.src.ReadAt((*buf)[:min(int64(len(*buf)), to-off)], off)
		if n > 0 {
			p := (*buf)[:n]
			if c.h != nil && c.hashed == off {
				c.h.Write(p)
				c.hashed += int64(n)
			}
			if werr := c.writeData(p, off); werr != nil {
				return werr
			}
			off += int64(n)
		}
		if err == io.EOF {
			if off < to {
				c.short = true
			}
			break
		}
		if err != nil {
			return err
		}
	}
	if c.size < off {
		// Its last blocks were zeros, left holes: the size reaches them.
		if err := c.dst.Truncate(off); err != nil {
			return err
		}
		c.size = off
	}
	return nil
}

// writeData writes p at off in dst, each run of blocks with data in one
// write, the blocks all zeros left holes.
func (c *copying) writeData(p []byte, off int64) error {
	for i := 0; i < len(p); {
		for i < len(p) && allZero(p[i:min(i+zeroBlock, len(p))]) {
			i += zeroBlock
		}
		if i >= len(p) {
			break
		}
		j := i
		for j < len(p) && !allZero(p[j:min(j+zeroBlock, len(p))]) {
			j += zeroBlock
		}
		j = min(j, len(p))
		if _, err := c.dst.WriteAt(p[i:j], off+int64(i)); err != nil {
			return err
		}
		c.size = max(c.size, off+int64(j))
		i = j
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
