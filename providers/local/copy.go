package local

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// copyChunk is how much one copy_file_range call asks for.
const copyChunk = 1 << 30

// hashBufSize is the read buffer for hashing content.
const hashBufSize = 1 << 20

// copyData copies all of src into dst (both at offset 0) with the kernel's
// fastest path: a reflink (FICLONE) where the file system shares blocks
// (btrfs, XFS), else copy_file_range, else a plain read and write.
func (b *Backend) copyData(dst, src *os.File) error {
	if !b.noClone.Load() {
		err := unix.IoctlFileClone(int(dst.Fd()), int(src.Fd()))
		if err == nil {
			return nil
		}
		if errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.EXDEV) || errors.Is(err, unix.EINVAL) ||
			errors.Is(err, unix.ENOTTY) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EBADF) {
			// This file system does not share blocks: stop asking.
			b.noClone.Store(true)
		} else {
			return fmt.Errorf("clone: %w", err)
		}
	}
	for {
		n, err := b.copyRange(src, dst)
		if err != nil {
			if errors.Is(err, unix.EXDEV) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.EINVAL) {
				return plainCopy(dst, src)
			}
			return err
		}
		if n == 0 {
			return nil
		}
	}
}

// copyRange is one copy_file_range call at the files' offsets.
func (b *Backend) copyRange(src, dst *os.File) (int, error) {
	n, err := unix.CopyFileRange(int(src.Fd()), nil, int(dst.Fd()), nil, copyChunk, 0)
	if err != nil {
		return 0, fmt.Errorf("copy_file_range: %w", err)
	}
	return n, nil
}

func plainCopy(dst, src *os.File) error {
	if _, err := src.Seek(0, io.SeekStart); err != nil {
		return err
	}
	if err := dst.Truncate(0); err != nil {
		return err
	}
	if _, err := dst.Seek(0, io.SeekStart); err != nil {
		return err
	}
	_, err := io.Copy(struct{ io.Writer }{dst}, struct{ io.Reader }{src})
	return err
}

// hashFile gives the SHA-256 of a file's content, read from offset 0.
func (b *Backend) hashFile(f *os.File) (string, int64, error) {
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

// hashPath hashes the file at path, never following a link.
func (b *Backend) hashPath(path string) (string, int64, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NOFOLLOW, 0)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	return b.hashFile(f)
}
