package guestfiles

import (
	"fmt"
	"io"
	"strings"

	"github.com/boxsnap/boxsnap/providers"
)

// MaxEntries bounds the entries a listing, a walk or a comparison holds for
// one side, so a hostile tree cannot fill the server's memory.
const MaxEntries = 1 << 20

// Parts cleans a caller's path into its parts beneath the guest's top
// folder (none for the top: "", "." and "/"), refusing one that climbs
// with "..".
func Parts(p string) ([]string, error) {
	q := strings.Trim(p, "/")
	if q == "" || q == "." {
		return nil, nil
	}
	var parts []string
	for _, part := range strings.Split(q, "/") {
		switch part {
		case "..":
			return nil, &providers.RefusedError{Why: fmt.Sprintf("The path %q climbs out of the box with ..; paths are relative to the box's top folder", p)}
		case "", ".":
			continue
		}
		parts = append(parts, part)
	}
	return parts, nil
}

// Rel is the path of parts as entries give it: "." for the top.
func Rel(parts []string) string {
	if len(parts) == 0 {
		return "."
	}
	return strings.Join(parts, "/")
}

// Join is the path of name in the folder dir, as Rel gives dir.
func Join(dir, name string) string {
	if dir == "." {
		return name
	}
	return dir + "/" + name
}

// Resolve finds the entry at parts (at least one) beneath the top, through
// no link: next(k) reads the entry at parts[:k+1], called only once every
// entry before it on the way is a folder. A link on the way is refused and
// never followed; anything else on the way that is not a folder leaves the
// path not found (providers.ErrNotFound). The last entry is answered as it
// is, a link too. where names the side in words (" in the box now", or
// "").
func Resolve[N any](parts []string, where string, kind func(N) string, next func(k int) (N, error)) (N, error) {
	var n N
	for k := range parts {
		var err error
		if n, err = next(k); err != nil {
			return n, err
		}
		if k == len(parts)-1 {
			break
		}
		switch kind(n) {
		case "dir":
		case "link":
			return n, ThroughLink(Rel(parts), Rel(parts[:k+1]), where)
		default:
			return n, NotFound(Rel(parts), where)
		}
	}
	return n, nil
}

// ThroughLink refuses rel on the side where names, whose way goes
// through a link: at via, where the reader knows which ("" when it does
// not). The link is never followed.
func ThroughLink(rel, via, where string) error {
	at := ""
	if via != "" {
		at = " (" + via + ")"
	}
	return &providers.RefusedError{Why: fmt.Sprintf("%s goes through a link%s%s, which is never followed", rel, at, where)}
}

// NotFound says that rel is not on the side where names.
func NotFound(rel, where string) error {
	return fmt.Errorf("%s%s: %w", rel, where, providers.ErrNotFound)
}

// FolderOnly refuses to list rel unless it is a folder (kind "dir"); a
// link to target is never followed.
func FolderOnly(rel, kind, target string) error {
	switch kind {
	case "dir":
		return nil
	case "link":
		return &providers.RefusedError{Why: fmt.Sprintf("%s is a link to %s, which is never followed", rel, target)}
	}
	return &providers.RefusedError{Why: fmt.Sprintf("%s is not a folder", rel)}
}

// FileOnly refuses to read rel on the side where names unless it is a
// regular file (kind "file"); a link to target is never followed.
func FileOnly(rel, where, kind, target string) error {
	switch kind {
	case "file":
		return nil
	case "link":
		return &providers.RefusedError{Why: fmt.Sprintf("%s%s is a link to %s, which is never followed", rel, where, target)}
	}
	return &providers.RefusedError{Why: fmt.Sprintf("%s%s is not a file", rel, where)}
}

// What a read's limit allows, in words, for TooLarge and ReadAtMost: a
// file read whole (a download) and a file compared.
const (
	ReadAllows = "this allows: restore the snapshot or fork it instead"
	DiffAllows = "a comparison allows"
)

// TooLarge refuses to read rel, of size bytes, past limit: why says what
// the limit allows (ReadAllows, DiffAllows).
func TooLarge(rel, where string, size, limit int64, why string) error {
	return &providers.RefusedError{Why: fmt.Sprintf("%s%s is %s, more than the %s %s", rel, where, providers.GB(size), providers.GB(limit), why)}
}

// ReadAtMost reads the content of rel, recorded as size bytes, from r: one
// larger than limit is refused (TooLarge) before a byte is read, and one
// whose content runs past limit all the same is refused once it does, so a
// guest that lies about a file's size never makes boxsnap hold more.
func ReadAtMost(r io.Reader, rel, where string, size, limit int64, why string) ([]byte, error) {
	if size > limit {
		return nil, TooLarge(rel, where, size, limit, why)
	}
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read %s%s: %w", rel, where, err)
	}
	if int64(len(data)) > limit {
		return nil, &providers.RefusedError{Why: fmt.Sprintf("%s%s grew past the %s %s", rel, where, providers.GB(limit), why)}
	}
	return data, nil
}

// TooMany refuses a walk of more than MaxEntries entries on the side where
// names.
func TooMany(where string) error {
	return &providers.RefusedError{Why: fmt.Sprintf("The box holds more than %d files and folders%s, more than boxsnap reads in one go", MaxEntries, where)}
}

// CloseThen gives rc, whose Close also calls done: a look's side stays
// until the file read from it closes.
func CloseThen(rc io.ReadCloser, done func()) io.ReadCloser {
	return &doneCloser{ReadCloser: rc, done: done}
}

// doneCloser is CloseThen's reader.
type doneCloser struct {
	io.ReadCloser
	done func()
}

func (d *doneCloser) Close() error {
	err := d.ReadCloser.Close()
	d.done()
	return err
}

// DiffFile compares one text file, rel, of the snapshot ref with the same
// path in the snapshot against, or in the box now (against nil). read
// gives a side's content, or missing where the side has no such path (the
// diff then reads it as /dev/null); any other error ends the comparison.
func DiffFile(ref providers.SnapshotRef, against *providers.SnapshotRef, rel string,
	read func(r providers.SnapshotRef, now bool) (data []byte, missing bool, err error)) (string, error) {
	side := func(r providers.SnapshotRef, now bool) ([]byte, string, error) {
		data, missing, err := read(r, now)
		switch {
		case err != nil:
			return nil, "", err
		case missing:
			return nil, "/dev/null", nil
		}
		return data, "", nil
	}
	old, oldName, err := side(ref, false)
	if err != nil {
		return "", err
	}
	var cur []byte
	var newName string
	if against != nil {
		cur, newName, err = side(*against, false)
	} else {
		cur, newName, err = side(ref, true)
	}
	if err != nil {
		return "", err
	}
	return providers.CompareSides(rel, oldName, old, newName, cur)
}
