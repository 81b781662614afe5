package guestfiles

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/providers"
)

// TestParts: a caller's path is cleaned beneath the top, and one that
// climbs with ".." anywhere is refused in words.
func TestParts(t *testing.T) {
	t.Parallel()
	for p, want := range map[string][]string{
		"": nil, ".": nil, "/": nil, "//": nil, "a": {"a"}, "/a/b/": {"a", "b"}, "a//./b": {"a", "b"}, "./a": {"a"}, "...": {"..."},
	} {
		got, err := Parts(p)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("Parts(%q) = %q, %v; want %q", p, got, err, want)
		}
	}
	for _, p := range []string{"..", "/..", "a/../b", "a/..", "../etc/passwd"} {
		_, err := Parts(p)
		var r *providers.RefusedError
		if !errors.As(err, &r) || !strings.Contains(r.Why, "climbs out of the box") {
			t.Errorf("Parts(%q) = %v, want a refusal", p, err)
		}
	}
	if Rel(nil) != "." || Rel([]string{"a", "b"}) != "a/b" || Join(".", "a") != "a" || Join("a", "b") != "a/b" {
		t.Error("Rel or Join")
	}
}

// TestResolveThroughNoLink: a link on the way is refused and never read
// past; a file on the way leaves the path not found; the last part is
// answered as it is, a link too.
func TestResolveThroughNoLink(t *testing.T) {
	t.Parallel()
	kinds := map[string]string{"a": "dir", "a/b": "dir", "a/b/c": "file", "l": "link", "l/x": "file", "f": "file", "a/ln": "link"}
	resolve := func(p string) (string, []string, error) {
		parts, err := Parts(p)
		if err != nil {
			t.Fatal(err)
		}
		var read []string
		got, err := Resolve(parts, " in the box now", func(s string) string { return kinds[s] }, func(k int) (string, error) {
			rel := Rel(parts[:k+1])
			read = append(read, rel)
			if _, ok := kinds[rel]; !ok {
				return "", NotFound(Rel(parts), " in the box now")
			}
			return rel, nil
		})
		return got, read, err
	}
	if got, read, err := resolve("a/b/c"); err != nil || got != "a/b/c" || !slices.Equal(read, []string{"a", "a/b", "a/b/c"}) {
		t.Errorf("a/b/c: %q after %q, %v", got, read, err)
	}
	if got, _, err := resolve("a/ln"); err != nil || got != "a/ln" {
		t.Errorf("a link last is answered as it is: %q, %v", got, err)
	}
	_, read, err := resolve("l/x")
	var r *providers.RefusedError
	if !errors.As(err, &r) || r.Why != "l/x goes through a link (l) in the box now, which is never followed" || !slices.Equal(read, []string{"l"}) {
		t.Errorf("through a link: %v after reading %q", err, read)
	}
	if _, read, err := resolve("f/x"); !errors.Is(err, providers.ErrNotFound) || err.Error() != "f/x in the box now: "+providers.ErrNotFound.Error() || len(read) != 1 {
		t.Errorf("through a file: %v after reading %q", err, read)
	}
	if _, _, err := resolve("a/nothing"); !errors.Is(err, providers.ErrNotFound) {
		t.Errorf("a path not there: %v", err)
	}
}

// TestOnlyFilesAndFolders: only a file is read and only a folder listed;
// a link is never followed, in words.
func TestOnlyFilesAndFolders(t *testing.T) {
	t.Parallel()
	if FileOnly("a", "", "file", "") != nil || FolderOnly("a", "dir", "") != nil {
		t.Error("a file or a folder refused")
	}
	for _, c := range []struct {
		err  error
		want string
	}{
		{FileOnly("a", " in the box now", "link", "/etc/shadow"), "a in the box now is a link to /etc/shadow, which is never followed"},
		{FileOnly("a", "", "other", ""), "a is not a file"},
		{FileOnly("a", "", "dir", ""), "a is not a file"},
		{FolderOnly("a", "link", "/"), "a is a link to /, which is never followed"},
		{FolderOnly("a", "file", ""), "a is not a folder"},
		{ThroughLink("a/b", "", " in the box now"), "a/b goes through a link in the box now, which is never followed"},
		{ThroughLink("a/b", "a", ""), "a/b goes through a link (a), which is never followed"},
	} {
		var r *providers.RefusedError
		if !errors.As(c.err, &r) || r.Why != c.want {
			t.Errorf("%v, want the refusal %q", c.err, c.want)
		}
	}
}

// lyingReader gives n bytes, whatever size the guest recorded.
type lyingReader struct{ n int }

func (l *lyingReader) Read(p []byte) (int, error) {
	if l.n == 0 {
		return 0, fmt.Errorf("read past the end")
	}
	m := min(len(p), l.n)
	l.n -= m
	return m, nil
}

// TestReadAtMost: a file recorded larger than the limit is refused before
// a byte is read; one whose content runs past the limit all the same is
// cut off there, never held whole.
func TestReadAtMost(t *testing.T) {
	t.Parallel()
	if data, err := ReadAtMost(strings.NewReader("hello"), "a", "", 5, 5, "this allows"); err != nil || string(data) != "hello" {
		t.Errorf("a file within the limit: %q, %v", data, err)
	}
	r := &lyingReader{n: 1 << 20}
	var refused *providers.RefusedError
	if _, err := ReadAtMost(r, "a", "", 10, 5, "this allows"); !errors.As(err, &refused) || !strings.Contains(refused.Why, "a is 10 bytes, more than the 5 bytes this allows") || r.n != 1<<20 {
		t.Errorf("a file recorded past the limit: %v, %d bytes read", err, 1<<20-r.n)
	}
	r = &lyingReader{n: 1 << 20}
	if _, err := ReadAtMost(r, "a", " in the box now", 3, 100, "a comparison allows"); !errors.As(err, &refused) || refused.Why != "a in the box now grew past the 100 bytes a comparison allows" || 1<<20-r.n > 101 {
		t.Errorf("a file whose content runs past its size: %v, %d bytes read", err, 1<<20-r.n)
	}
}

// TestDiffFileSides: a side without the path reads as /dev/null, the other
// side is the snapshot against or the box now, and any other error ends
// the comparison.
func TestDiffFileSides(t *testing.T) {
	t.Parallel()
	ref, other := providers.SnapshotRef{Ref: "one"}, providers.SnapshotRef{Ref: "two"}
	var asked []string
	read := func(r providers.SnapshotRef, now bool) ([]byte, bool, error) {
		asked = append(asked, fmt.Sprintf("%s/%v", r.Ref, now))
		if r.Ref == "two" {
			return nil, true, nil
		}
		return []byte("a\n"), false, nil
	}
	diff, err := DiffFile(ref, &other, "etc/motd", read)
	if err != nil || !strings.Contains(diff, "/dev/null") || !slices.Equal(asked, []string{"one/false", "two/false"}) {
		t.Errorf("against a snapshot without it: %q, %v, asked %q", diff, err, asked)
	}
	asked = nil
	if _, err := DiffFile(ref, nil, "etc/motd", read); err != nil || !slices.Equal(asked, []string{"one/false", "one/true"}) {
		t.Errorf("against the box now: %v, asked %q", err, asked)
	}
	boom := errors.New("the engine does not answer")
	if _, err := DiffFile(ref, nil, "etc/motd", func(providers.SnapshotRef, bool) ([]byte, bool, error) { return nil, false, boom }); !errors.Is(err, boom) {
		t.Errorf("an error reading a side: %v", err)
	}
}

// TestCloseThen: the look's side is let go when the file closes, once.
func TestCloseThen(t *testing.T) {
	t.Parallel()
	n := 0
	rc := CloseThen(io.NopCloser(strings.NewReader("x")), func() { n++ })
	if err := rc.Close(); err != nil || n != 1 {
		t.Errorf("Close: %v, done %d times", err, n)
	}
}
