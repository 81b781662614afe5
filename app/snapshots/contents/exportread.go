package contents

import (
	"archive/tar"
	"errors"
	"io"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

// tarEnd is the two zero blocks that end a tar; maxZerosAfterEnd bounds the
// zeros that may follow them (a tar written in records is padded with
// them).
const (
	tarEnd           = 1024
	maxZerosAfterEnd = 1 << 20
)

// exportReader is an export file as Stage reads it: it counts what it
// read, keeps its last tarEnd bytes (so a file that stops where a tar
// member does, short of its end, is told from a whole one) and the first
// error its reader gave (so a file cut short or damaged on its way here is
// told from a write that failed on the host).
type exportReader struct {
	r    io.Reader
	n    int64
	tail [tarEnd]byte
	err  error
}

func (e *exportReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if n > 0 {
		e.n += int64(n)
		if n >= tarEnd {
			copy(e.tail[:], p[n-tarEnd:n])
		} else {
			copy(e.tail[:], e.tail[n:])
			copy(e.tail[tarEnd-n:], p[:n])
		}
	}
	if err != nil && err != io.EOF && e.err == nil {
		e.err = err
	}
	return n, err
}

// broken is Stage's answer to err, an error its reading of the export file
// ended in: a refusal already in words as it is; the reader's own error (an
// upload or a download that broke, a body over its bound) a refusal that
// keeps it as its cause; a tar cut short or damaged a refusal in words; any
// other error (a write that failed on the host) itself.
func (e *exportReader) broken(name string, err error) error {
	var r *snapshots.Refusal
	switch {
	case errors.As(err, &r):
		return err
	case e.err != nil && errors.Is(e.err, io.ErrUnexpectedEOF):
		return snapshots.CutShort(badArchive(name, exportCutShortWords), e.err)
	case e.err != nil:
		return snapshots.CutShort(badArchive(name, "%s", exportUnreadWords(e.err)), e.err)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return snapshots.CutShort(badArchive(name, exportCutShortWords), err)
	case errors.Is(err, tar.ErrHeader):
		return badArchive(name, exportDamagedWords)
	}
	return err
}

// end checks the export file once its tar reader met the tar's end: it
// was not empty, it held the two zero blocks of a tar's end (a file that
// stops where a member does gives the tar reader its end too), and
// nothing follows them but zeros, up to a bound.
func (e *exportReader) end(name string) error {
	if e.n == 0 {
		return badArchive(name, exportEmptyWords)
	}
	if e.n < tarEnd || e.tail != [tarEnd]byte{} {
		return snapshots.CutShort(badArchive(name, exportCutShortWords), io.ErrUnexpectedEOF)
	}
	n, err := io.Copy(zerosOnly{}, io.LimitReader(e, maxZerosAfterEnd+1))
	if errors.Is(err, errNotZero) || (err == nil && n > maxZerosAfterEnd) {
		return badArchive(name, exportTrailerWords)
	}
	if err != nil {
		return e.broken(name, err)
	}
	return nil
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
