package confined

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/boxsnap/boxsnap/providers/local/store"
)

// The bounds of a manifest that comes from elsewhere (an archive) or that a
// restore is about to write. A take of a box of two million paths gives a
// manifest of about 150 MiB; a path and a link's target are bounded as
// Linux bounds them (PATH_MAX and NAME_MAX).
const (
	MaxManifestBytes = 256 << 20
	MaxEntries       = 2_000_000
	maxPathBytes     = 4095
	maxNameBytes     = 255
	maxTargetBytes   = 4095
)

// badEntryError names the first entry of a manifest that must never be
// written, and why.
type badEntryError struct {
	Path, Why string
}

func (e *badEntryError) Error() string {
	p := e.Path
	if len(p) > 120 {
		p = p[:120] + "…"
	}
	return fmt.Sprintf("the entry %q %s", p, e.Why)
}

// CheckRel says what is wrong with a manifest's path, or "" when it is
// clean: relative, slash-separated, no empty, "." or ".." part (the box's
// folder itself is "."), no NUL, bounded.
func CheckRel(p string) string {
	switch {
	case p == ".":
		return ""
	case p == "":
		return "has an empty path"
	case len(p) > maxPathBytes:
		return fmt.Sprintf("has a path longer than %d bytes", maxPathBytes)
	case strings.IndexByte(p, 0) >= 0:
		return "has a NUL byte in its path"
	case p[0] == '/':
		return "is a full path, not one inside the box"
	}
	for part := range strings.SplitSeq(p, "/") {
		switch {
		case part == "":
			return "has an empty part in its path (a doubled or trailing slash)"
		case part == "..":
			return "goes up out of its folder (“..”)"
		case part == ".":
			return "has a “.” part in its path"
		case len(part) > maxNameBytes:
			return fmt.Sprintf("has a name longer than %d bytes", maxNameBytes)
		}
	}
	return ""
}

// CheckEntries checks that a manifest's entries are safe to write beneath a
// box's folder: every path clean (checkRel) and listed once, of a known
// type, inside a folder that is itself an entry of type folder (so nothing
// lies beneath a link), the box's folder "." a folder; a file's content
// named by a SHA-256 and given one size; a link's target bounded (it is
// data: a link may point anywhere, nothing is written through it). It
// answers the first entry that fails, in the manifest's order.
func CheckEntries(es []store.Entry) error {
	if len(es) > MaxEntries {
		return fmt.Errorf("it has %d entries, more than the %d a manifest may have", len(es), MaxEntries)
	}
	types := make(map[string]string, len(es))
	sizes := make(map[string]int64)
	for i := range es {
		e := &es[i]
		if why := CheckRel(e.Path); why != "" {
			return &badEntryError{e.Path, why}
		}
		if _, dup := types[e.Path]; dup {
			return &badEntryError{e.Path, "is listed twice"}
		}
		switch e.Type {
		case store.TypeFile:
			if !IsHash(e.Hash) {
				return &badEntryError{e.Path, "is a file whose content is not named by a SHA-256"}
			}
			if e.Size < 0 {
				return &badEntryError{e.Path, "is a file of a negative size"}
			}
			if s, ok := sizes[e.Hash]; ok && s != e.Size {
				return &badEntryError{e.Path, fmt.Sprintf("gives content %s another size than an earlier entry does", e.Hash[:12])}
			}
			sizes[e.Hash] = e.Size
		case store.TypeLink:
			if len(e.Target) > maxTargetBytes {
				return &badEntryError{e.Path, fmt.Sprintf("is a link whose target is longer than %d bytes", maxTargetBytes)}
			}
			if strings.IndexByte(e.Target, 0) >= 0 {
				return &badEntryError{e.Path, "is a link whose target has a NUL byte"}
			}
		case store.TypeDir, store.TypeFIFO:
		default:
			return &badEntryError{e.Path, fmt.Sprintf("is of an unknown type %q", e.Type)}
		}
		types[e.Path] = e.Type
	}
	switch types["."] {
	case store.TypeDir:
	case "":
		return fmt.Errorf(`it has no entry "." for the box's own folder`)
	default:
		return &badEntryError{".", "is the box's own folder, and not a folder"}
	}
	for i := range es {
		p := es[i].Path
		if p == "." {
			continue
		}
		dir := path.Dir(p)
		switch types[dir] {
		case store.TypeDir:
		case "":
			return &badEntryError{p, fmt.Sprintf("lies in %q, which is not an entry of the manifest", dir)}
		case store.TypeLink:
			return &badEntryError{p, fmt.Sprintf("lies beneath the link %q", dir)}
		default:
			return &badEntryError{p, fmt.Sprintf("lies beneath %q, which is not a folder", dir)}
		}
	}
	return nil
}

// IsHash says whether h is a SHA-256 in lower-case hex, as content is named.
func IsHash(h string) bool {
	return len(h) == 64 && strings.Trim(h, "0123456789abcdef") == ""
}

// minEntryBytes is the least an entry takes in a manifest's binary body:
// two lengths of its path, its type and flags, and eight numbers.
const minEntryBytes = 12

// CheckEntryCount reads how many entries a manifest's binary body says it
// holds, without decoding them, and refuses a count over maxEntries or more
// than the body can hold: the decoder makes room for every entry it is
// told of before it reads one.
func CheckEntryCount(body []byte) error {
	p, ok := bytes.CutPrefix(body, []byte(store.ManifestMagic))
	if !ok {
		return errors.New("it is not a manifest")
	}
	hl, n := binary.Uvarint(p)
	if n <= 0 || hl > uint64(len(p)-n) {
		return errors.New("it is cut short")
	}
	p = p[n+int(hl):]
	count, n := binary.Uvarint(p)
	switch {
	case n <= 0:
		return errors.New("it is cut short")
	case count > MaxEntries:
		return fmt.Errorf("it has %d entries, more than the %d a manifest may have", count, MaxEntries)
	case count > uint64(len(p)-n)/minEntryBytes:
		return fmt.Errorf("it says it has %d entries, more than its %d bytes can hold", count, len(p)-n)
	}
	return nil
}
