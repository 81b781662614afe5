package providers

import (
	"archive/tar"
	"bufio"
	"compress/flate"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
)

// maxZerosAfterEnd bounds the zeros an archive may hold after its tar's
// end (a tar written in records is padded with them): past it, or any other
// byte, is something after its end.
const maxZerosAfterEnd = 1 << 20

// ArchiveStream reads the tar inside an archive an import was given: a gzip
// stream that comes from another install and may have been cut short or
// damaged on its way. It remembers the first error the stream gave, so that
// the import tells the archive's faults from the host's and says them in
// words (Fault), and it checks that the archive ends where its tar does
// (End): a gzip stream's check sum is read only at its very end.
type ArchiveStream struct {
	br  *bufio.Reader // the archive's bytes, read on past its gzip stream by End
	zr  *gzip.Reader  // its one gzip stream
	err error         // the first error the stream gave, io.EOF aside
}

// OpenArchive begins to read an archive: an empty one, one cut short in its
// first bytes and one that is no gzip stream are refused in words; a read
// that fails on the host is an error.
func OpenArchive(r io.Reader) (*ArchiveStream, error) {
	br := bufio.NewReader(r)
	zr, err := gzip.NewReader(br)
	switch {
	case err == nil:
		zr.Multistream(false) // boxsnap writes one: what follows is End's
		return &ArchiveStream{br: br, zr: zr}, nil
	case err == io.EOF:
		return nil, &RefusedError{Why: ArchiveEmptyWords}
	case errors.Is(err, gzip.ErrHeader):
		return nil, &RefusedError{Why: ArchiveNotGzipWords}
	}
	if words, ok := brokenArchiveWords(err); ok {
		return nil, &RefusedError{Why: words}
	}
	return nil, fmt.Errorf("read the archive: %w", err)
}

// Read reads the archive's tar, uncompressed.
func (a *ArchiveStream) Read(p []byte) (int, error) {
	n, err := a.zr.Read(p)
	if err != nil && err != io.EOF && a.err == nil {
		a.err = err
	}
	return n, err
}

// Fault is what an import answers when its reading of the archive ended in
// err: where the stream broke (cut short, damaged), or
// err is the tar's own (a tar cut short, a header that is no header), a
// refusal in words, whatever err says; err itself otherwise (a refusal of
// what the archive holds, a write that failed on the host, a context
// ended).
func (a *ArchiveStream) Fault(err error) error {
	if err == nil {
		return nil
	}
	cause := err
	if a.err != nil {
		cause = a.err
	}
	if words, ok := brokenArchiveWords(cause); ok {
		return &RefusedError{Why: words}
	}
	return err
}

// End reads the archive on from its tar's end, once the tar reader met it:
// zeros may follow in its gzip stream, up to a bound, and nothing after that
// stream (another gzip member, bytes that are no gzip); a gzip stream whose
// last bytes (its check sum and size) are missing or do not match is
// refused too.
func (a *ArchiveStream) End() error {
	n, err := io.Copy(zerosOnly{}, io.LimitReader(a, maxZerosAfterEnd+1))
	if errors.Is(err, errNotZero) || (err == nil && n > maxZerosAfterEnd) {
		return &RefusedError{Why: ArchiveTrailerWords}
	}
	if err != nil {
		return a.Fault(err)
	}
	switch _, err := a.br.Peek(1); {
	case err == nil:
		return &RefusedError{Why: ArchiveTrailerWords}
	case err != io.EOF:
		return fmt.Errorf("read the archive: %w", err)
	}
	return nil
}

// brokenArchiveWords says what is wrong with an archive whose reading
// failed with err, when err is the archive's fault: cut short, damaged, or
// a tar that is no tar.
func brokenArchiveWords(err error) (string, bool) {
	var corrupt flate.CorruptInputError
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF):
		return ArchiveCutShortWords, true
	case errors.Is(err, gzip.ErrChecksum), errors.As(err, &corrupt):
		return ArchiveDamagedWords, true
	case errors.Is(err, tar.ErrHeader):
		return ArchiveNotTarWords, true
	}
	return "", false
}

var errNotZero = errors.New("a byte that is not zero")

// zerosOnly takes zeros and refuses any other byte.
type zerosOnly struct{}

func (zerosOnly) Write(p []byte) (int, error) {
	for i, c := range p {
		if c != 0 {
			return i, errNotZero
		}
	}
	return len(p), nil
}
