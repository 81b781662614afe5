package store

import (
	"io/fs"
	"sort"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/boxsnap/boxsnap/providers"
)

// ManifestFormat is the version of the manifest's layout.
const ManifestFormat = 1

// Entry types in a manifest.
const (
	TypeFile = "f"
	TypeDir  = "d"
	TypeLink = "l"
	TypeFIFO = "p"
)

// Entry is one path of a snapshot. Size, mtime, ctime and inode are kept so
// that the next take of the same box reuses the hash of a file that did not
// change without reading it.
type Entry struct {
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

// Manifest is one snapshot's list of paths, and what it was taken of.
type Manifest struct {
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
	Entries    []Entry `json:"entries"`
}

// Label is what the snapshot's label file holds: providers.Label and the
// take's time, never a name, a note or a secret.
type Label struct {
	providers.Label
	TakenAt time.Time `json:"takenAt"`
	// Run is how the box ran when the snapshot was taken, so another host
	// that makes the box from it runs it alike; nil in a snapshot taken
	// before labels recorded it.
	Run *Run `json:"run,omitempty"`
}

// Run is how a box runs (its state's command, user, limits and network),
// never its environment, which may hold secrets.
type Run struct {
	Kind      string              `json:"kind,omitempty"`
	Command   string              `json:"command,omitempty"`
	User      string              `json:"user,omitempty"`
	Limits    providers.BoxLimits `json:"limits,omitempty"`
	NoNetwork bool                `json:"noNetwork,omitempty"`
	Publish   []int               `json:"publish,omitempty"`
	// Running is whether the box ran (was marked running) at the take.
	Running bool `json:"running,omitempty"`
}

// StatKey is what says a file did not change since a manifest recorded it.
type StatKey struct {
	size  int64
	mtime int64
	ctime int64
	ino   uint64
}

func KeyOf(st *unix.Stat_t) StatKey {
	return StatKey{size: st.Size, mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano(), ino: st.Ino}
}

func (e *Entry) Key() StatKey {
	return StatKey{size: e.Size, mtime: e.MTime, ctime: e.CTime, ino: e.Ino}
}

// EntryFromStat fills the parts of an entry a stat gives.
func EntryFromStat(rel string, st *unix.Stat_t) Entry {
	mode := ModeOfStat(st.Mode)
	e := Entry{
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
		e.Type = TypeDir
	case mode&fs.ModeSymlink != 0:
		e.Type = TypeLink
	case mode&fs.ModeNamedPipe != 0:
		e.Type = TypeFIFO
	case mode.IsRegular():
		e.Type = TypeFile
		e.Size = st.Size
	}
	return e
}

// FileMode turns an entry's stored bits back into an fs.FileMode.
func (e *Entry) FileMode() fs.FileMode {
	m := fs.FileMode(e.Mode)
	return m & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
}

// ByPath indexes a manifest's entries.
func (m *Manifest) ByPath() map[string]*Entry {
	out := make(map[string]*Entry, len(m.Entries))
	for i := range m.Entries {
		out[m.Entries[i].Path] = &m.Entries[i]
	}
	return out
}

// Hashes gives the set of content a manifest uses, with each one's size.
func (m *Manifest) Hashes() map[string]int64 {
	out := make(map[string]int64)
	for i := range m.Entries {
		if m.Entries[i].Type == TypeFile {
			out[m.Entries[i].Hash] = m.Entries[i].Size
		}
	}
	return out
}

// SortEntries puts a folder before what it holds.
func SortEntries(es []Entry) {
	sort.Slice(es, func(i, j int) bool { return es[i].Path < es[j].Path })
}

// Depth is how many folders deep a relative path is.
func Depth(rel string) int {
	if rel == "." {
		return 0
	}
	return strings.Count(rel, "/") + 1
}

// ModeOfStat turns st_mode into an fs.FileMode with its type.
func ModeOfStat(m uint32) fs.FileMode {
	out := FileModeOf(m)
	switch m & unix.S_IFMT {
	case unix.S_IFDIR:
		out |= fs.ModeDir
	case unix.S_IFLNK:
		out |= fs.ModeSymlink
	case unix.S_IFIFO:
		out |= fs.ModeNamedPipe
	case unix.S_IFSOCK:
		out |= fs.ModeSocket
	case unix.S_IFCHR:
		out |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		out |= fs.ModeDevice
	}
	return out
}

// FileModeOf turns a stat's st_mode into the bits an entry keeps.
func FileModeOf(m uint32) fs.FileMode {
	out := fs.FileMode(m & 0o777)
	if m&unix.S_ISUID != 0 {
		out |= fs.ModeSetuid
	}
	if m&unix.S_ISGID != 0 {
		out |= fs.ModeSetgid
	}
	if m&unix.S_ISVTX != 0 {
		out |= fs.ModeSticky
	}
	return out
}

// DropVanished drops the files that vanished before they were read, and
// counts m's files and their bytes.
func (m *Manifest) DropVanished() {
	kept := m.Entries[:0]
	for _, e := range m.Entries {
		if e.Type != "" {
			kept = append(kept, e)
		}
	}
	m.Entries = kept
	for i := range m.Entries {
		if m.Entries[i].Type == TypeFile {
			m.Files++
			m.Bytes += m.Entries[i].Size
		}
	}
}
