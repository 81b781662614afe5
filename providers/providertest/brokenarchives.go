package providertest

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/providers"
)

// BrokenArchive is one way an archive breaks on its way to an import: its
// name, its bytes, and the words its refusal says (one of them).
type BrokenArchive struct {
	Name  string
	Bytes []byte
	Words []string
}

// libraryWords are what a library's own error says, which a refusal a
// person reads never repeats: they say what broke in the code, not what is
// wrong with the file.
var libraryWords = []string{"EOF", "flate", "gzip:", "archive/tar", "corrupt input", "checksum error", "invalid header"}

// BrokenArchives gives the ways whole, a gzip-compressed tar an export
// wrote, breaks on its way: empty; not gzip at all; cut short in its gzip
// header, in the first bytes of each of its tar's members, in the middle of
// its largest member whose name begins with mid, in its tar's end, in its
// gzip trailer and just before it; a byte flipped in that largest member's
// compressed bytes and in the trailer's check sum; bytes that are no gzip
// after its end, and a second gzip member after it. Each must be refused.
func BrokenArchives(t testing.TB, whole []byte, mid string) []BrokenArchive {
	t.Helper()
	type member struct {
		name        string
		start, size int64
	}
	zr, err := gzip.NewReader(bytes.NewReader(whole))
	if err != nil {
		t.Fatal(err)
	}
	cr := &counted{r: zr}
	tr := tar.NewReader(cr)
	var members []member
	big := -1
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		members = append(members, member{hdr.Name, cr.n, hdr.Size})
		if strings.HasPrefix(hdr.Name, mid) && (big < 0 || hdr.Size > members[big].size) {
			big = len(members) - 1
		}
	}
	if big < 0 || members[big].size < 4096 {
		t.Fatalf("the archive holds no member %s* of at least 4 KiB to break in its middle", mid)
	}
	last, large := members[len(members)-1], members[big]
	end := last.start + (last.size+511)/512*512 // where the tar's end begins
	// at is the shortest prefix of whole that inflates past n bytes: a
	// cut there falls at the n-th byte of the tar.
	at := func(n int64) int {
		lo, hi := 0, len(whole)
		for lo < hi {
			m := (lo + hi) / 2
			if inflated(whole[:m]) > n {
				hi = m
			} else {
				lo = m + 1
			}
		}
		return lo
	}
	cut := func(n int) []byte { return bytes.Clone(whole[:n]) }
	flip := func(i int) []byte {
		b := bytes.Clone(whole)
		b[i] ^= 0xff
		return b
	}
	short := []string{providers.ArchiveCutShortWords}
	damaged := []string{providers.ArchiveCutShortWords, providers.ArchiveDamagedWords, providers.ArchiveNotTarWords,
		"does not match its hash", "does not match its diff ID", "does not match its checksum", "is no whole tar"}
	after := []string{providers.ArchiveTrailerWords}
	var second bytes.Buffer
	zw := gzip.NewWriter(&second)
	_, _ = zw.Write([]byte("a second member"))
	_ = zw.Close()
	out := []BrokenArchive{
		{"empty", nil, []string{providers.ArchiveEmptyWords}},
		{"not gzip", []byte("a plain text file, not an archive\n"), []string{providers.ArchiveNotGzipWords}},
		{"cut in its gzip header", cut(5), short},
	}
	for _, m := range members {
		out = append(out, BrokenArchive{"cut in " + shortName(m.name), cut(at(m.start + min(m.size/2, 16))), short})
	}
	out = append(out,
		BrokenArchive{"cut in the middle of " + shortName(large.name), cut(at(large.start + large.size/2)), short},
		BrokenArchive{"cut in its tar's end", cut(at(end + 512)), short},
		BrokenArchive{"cut before its gzip trailer", cut(len(whole) - 8), short},
		BrokenArchive{"cut in its last byte", cut(len(whole) - 1), short},
		BrokenArchive{"a byte flipped in the middle of " + shortName(large.name), flip(at(large.start + large.size/2)), damaged},
		BrokenArchive{"a byte flipped in its check sum", flip(len(whole) - 7), []string{providers.ArchiveDamagedWords}},
		BrokenArchive{"garbage after its end", append(bytes.Clone(whole), "trailing garbage\n"...), after},
		BrokenArchive{"a second gzip member after its end", append(bytes.Clone(whole), second.Bytes()...), after},
	)
	return out
}

// RefusedInWords fails the test unless err is a refusal of an import
// (ErrRefused, "Nothing was imported") that says one of words and none of a
// library's own.
func RefusedInWords(t testing.TB, err error, words []string) {
	t.Helper()
	var re *providers.RefusedError
	if !errors.As(err, &re) || !errors.Is(err, providers.ErrRefused) {
		t.Fatalf("answered %v, want a refusal", err)
	}
	said := false
	for _, w := range words {
		said = said || strings.Contains(re.Why, w)
	}
	if !said {
		t.Errorf("the refusal %q says none of %q", re.Why, words)
	}
	if !strings.Contains(re.Why, "Nothing was imported") {
		t.Errorf("the refusal %q does not say nothing was imported", re.Why)
	}
	for _, w := range libraryWords {
		if strings.Contains(re.Why, w) {
			t.Errorf("the refusal %q repeats a library's words %q", re.Why, w)
		}
	}
}

// inflated is how many bytes of its tar a prefix of an archive gives
// before it breaks.
func inflated(prefix []byte) int64 {
	zr, err := gzip.NewReader(bytes.NewReader(prefix))
	if err != nil {
		return 0
	}
	n, _ := io.Copy(io.Discard, zr)
	return n
}

// counted counts what is read through it.
type counted struct {
	r io.Reader
	n int64
}

func (c *counted) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// shortName is a member's name in a case's name: a long hash cut to 12.
func shortName(name string) string {
	if i := strings.LastIndex(name, "/"); i >= 0 && len(name)-i > 13 {
		return name[:i+13]
	}
	return name
}
