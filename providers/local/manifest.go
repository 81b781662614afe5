package local

import (
	"io/fs"
	"path"
	"sort"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/boxsnap/boxsnap/providers"
)

// manifestFormat is the version of the manifest's layout.
const manifestFormat = 1

// Entry types in a manifest.
const (
	typeFile = "f"
	typeDir  = "d"
	typeLink = "l"
	typeFIFO = "p"
)

// entry is one path of a snapshot. Size, mtime, ctime and inode are kept so
// that the next take of the same box reuses the hash of a file that did not
// change without reading it.
type entry struct {
	Path   string `json:"p"` // slash-separated, relative; "." is the box's folder
	Type   string `json:"t"`
	Mode   uint32 `json:"m"` // fs.FileMode's permission and special bits
	UID    uint32 `json:"u"`
	GID    uint32 `json:"g"`
	MTime  int64  `json:"mt"` // nanoseconds since the epoch
	ATime  int64  `json:"at"`
	Size   int64  `json:"s,omitempty"`
	Hash   string `json:"h,omitempty"` // SHA-256 of a file's content, hex
	Target string `json:"l,omitempty"` // a link's target, never followed

	// The stat cache, for the next take: inode and change time.
	Ino   uint64 `json:"i,omitempty"`
	CTime int64  `json:"ct,omitempty"`
}

// manifest is one snapshot's list of paths, and what it was taken of.
type manifest struct {
	Format       int             `json:"format"`
	ID           string          `json:"id"`
	Guest        providers.Guest `json:"guest"`
	Parent       string          `json:"parent,omitempty"`
	CapturedAt   time.Time       `json:"capturedAt"`
	ResetVersion int             `json:"resetVersion"`
	Files        int             `json:"files"`
	Bytes        int64           `json:"bytes"`
	// AddedBytes is the content this take added to the store.
	AddedBytes int64   `json:"addedBytes"`
	Entries    []entry `json:"entries"`
}

// label is what the snapshot's label file holds: providers.Label and the
// take's time, never a name, a note or a secret.
type label struct {
	providers.Label
	TakenAt time.Time `json:"takenAt"`
}

// statKey is what says a file did not change since a manifest recorded it.
type statKey struct {
	size  int64
	mtime int64
	ctime int64
	ino   uint64
}

func keyOf(st *unix.Stat_t) statKey {
	return statKey{size: st.Size, mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano(), ino: st.Ino}
}

func (e *entry) key() statKey {
	return statKey{size: e.Size, mtime: e.MTime, ctime: e.CTime, ino: e.Ino}
}

// entryFromStat fills the parts of an entry a stat gives.
func entryFromStat(rel string, st *unix.Stat_t) entry {
	mode := modeOfStat(st.Mode)
	e := entry{
		Path:  rel,
		Mode:  uint32(mode.Perm() | mode&(fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky)),
		UID:   st.Uid,
		GID:   st.Gid,
		MTime: st.Mtim.Nano(),
		ATime: st.Atim.Nano(),
		Ino:   st.Ino,
		CTime: st.Ctim.Nano(),
	}
	switch {
	case mode.IsDir():
		e.Type = typeDir
	case mode&fs.ModeSymlink != 0:
		e.Type = typeLink
	case mode&fs.ModeNamedPipe != 0:
		e.Type = typeFIFO
	case mode.IsRegular():
		e.Type = typeFile
		e.Size = st.Size
	}
	return e
}

// fileMode turns an entry's stored bits back into an fs.FileMode.
func (e *entry) fileMode() fs.FileMode {
	m := fs.FileMode(e.Mode)
	return m & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
}

// byPath indexes a manifest's entries.
func (m *manifest) byPath() map[string]*entry {
	out := make(map[string]*entry, len(m.Entries))
	for i := range m.Entries {
		out[m.Entries[i].Path] = &m.Entries[i]
	}
	return out
}

// hashes gives the set of content a manifest uses, with each one's size.
func (m *manifest) hashes() map[string]int64 {
	out := make(map[string]int64)
	for i := range m.Entries {
		if m.Entries[i].Type == typeFile {
			out[m.Entries[i].Hash] = m.Entries[i].Size
		}
	}
	return out
}

// sortEntries puts a folder before what it holds.
func sortEntries(es []entry) {
	sort.Slice(es, func(i, j int) bool { return es[i].Path < es[j].Path })
}

// depth is how many folders deep a relative path is.
func depth(rel string) int {
	if rel == "." {
		return 0
	}
	return strings.Count(rel, "/") + 1
}

// cleanRel checks a path given by a caller: relative, slash-separated, no
// "..", and gives its clean form ("." for the top).
func cleanRel(p string) (string, bool) {
	p = strings.TrimPrefix(p, "/")
	if p == "" || p == "." {
		return ".", true
	}
	for _, part := range strings.Split(p, "/") {
		if part == ".." {
			return "", false
		}
	}
	c := path.Clean(p)
	if c == ".." || strings.HasPrefix(c, "../") {
		return "", false
	}
	return c, true
}
