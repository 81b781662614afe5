package providers

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"testing"
)

// TestArchiveEnd: what may follow a tar's end inside an archive's gzip
// stream: zeros, as a tar written in records is padded, up to 1 MiB; more
// zeros, or any other byte, is refused as bytes after its end.
func TestArchiveEnd(t *testing.T) {
	t.Parallel()
	archive := func(after []byte) []byte {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		tw := tar.NewWriter(zw)
		_ = tw.WriteHeader(&tar.Header{Name: "f", Mode: 0o644, Size: 5, Typeflag: tar.TypeReg})
		_, _ = tw.Write([]byte("hello"))
		_ = tw.Close()
		_, _ = zw.Write(after)
		_ = zw.Close()
		return buf.Bytes()
	}
	for _, c := range []struct {
		name    string
		after   []byte
		refused bool
	}{
		{"nothing", nil, false},
		{"a record's padding", make([]byte, 10240-2048), false},
		{"1 MiB of zeros", make([]byte, maxZerosAfterEnd), false},
		{"more zeros", make([]byte, maxZerosAfterEnd+1), true},
		{"a byte", []byte{0, 0, 1}, true},
	} {
		zs, err := OpenArchive(bytes.NewReader(archive(c.after)))
		if err != nil {
			t.Fatal(err)
		}
		tr := tar.NewReader(zs)
		for {
			_, err := tr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
		}
		err = zs.End()
		var re *RefusedError
		if got := errors.As(err, &re) && re.Why == ArchiveTrailerWords; got != c.refused || (!c.refused && err != nil) {
			t.Errorf("%s after the tar's end: End answered %v", c.name, err)
		}
	}
}
