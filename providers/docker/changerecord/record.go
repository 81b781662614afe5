package changerecord

import (
	"bufio"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/moby/moby/api/types/container"
)

// ChangeRecord is what boxsnap recorded of a box at its last take: every
// path of the container's writable layer (the engine's list of changes from
// its image) with its stat, every path of its volume with its stat, and the
// snapshot's image. A box whose layer and volume read the same as its
// record changed nothing since that take; a take after it needs only the
// paths whose stat differs.
type ChangeRecord struct {
	Snap   string // the snapshot's ID
	Image  string // its image's ID
	Layers int    // how many layers its image has
	Layer  LayerState
	Volume VolumeState
	// VolumeIn says the image holds the volume as volume reads (the
	// backend's label on it says so), so a take on it needs only the
	// volume's changes.
	VolumeIn bool
	// Stamp is the kernel's time (less RacySlack) before the take's reads
	// of the running box: a path whose time falls after it may be written
	// again in the tick the record read it in, its stat unchanged
	// (Settled). Zero where unknown.
	Stamp time.Time
}

// LayerEntry is one path of a container's writable layer: deleted (a
// whiteout of the image's path), or there with its stat, and its change
// time where the backend can read it (the engine's stat has none): a write
// that sets the modification time back and keeps the size moves the
// change time all the same.
type LayerEntry struct {
	Deleted bool
	Stat    container.PathStat
	Ctime   time.Time
}

// last is the latest of the entry's times.
func (e LayerEntry) last() time.Time {
	if e.Ctime.After(e.Stat.Mtime) {
		return e.Ctime
	}
	return e.Stat.Mtime
}

// LayerState is the container's writable layer, path → entry.
type LayerState map[string]LayerEntry

// VolumeState is the volume's files, path (relative, "./…") → stat line
// (mode, size, inode, owner, group, change and modification times to the
// nanosecond).
type VolumeState map[string]string

// sameStat says whether two reads of a path read alike; a change time
// counts only where both reads have one (a record written before they were
// read has none).
func sameStat(a, b LayerEntry) bool {
	x, y := a.Stat, b.Stat
	if !a.Ctime.IsZero() && !b.Ctime.IsZero() && !a.Ctime.Equal(b.Ctime) {
		return false
	}
	return x.Size == y.Size && x.Mode == y.Mode && x.Mtime.Equal(y.Mtime) && x.LinkTarget == y.LinkTarget
}

// LayerDelta is what changed in a container's layer since a record of it:
// the paths to read again (new, or their stat differs) and the paths gone
// (to whiteout in a layer on the record's image).
type LayerDelta struct {
	Changed, Gone []string
}

func (d LayerDelta) Paths() int { return len(d.Changed) + len(d.Gone) }

// LayerSince compares the layer now with the one recorded.
func LayerSince(rec, now LayerState) LayerDelta {
	var d LayerDelta
	for p, e := range now {
		old, had := rec[p]
		switch {
		case e.Deleted && (!had || !old.Deleted):
			d.Gone = append(d.Gone, p)
		case !e.Deleted && (!had || old.Deleted || !sameStat(old, e)):
			d.Changed = append(d.Changed, p)
		}
	}
	for p, old := range rec {
		if _, ok := now[p]; !ok && !old.Deleted {
			d.Gone = append(d.Gone, p)
		}
	}
	return d
}

// VolumeSince counts the volume's paths that are new, gone, or whose stat
// differs from the record's.
func VolumeSince(rec, now VolumeState) int {
	n := 0
	for p, st := range now {
		if old, ok := rec[p]; !ok || old != st {
			n++
		}
	}
	for p := range rec {
		if _, ok := now[p]; !ok {
			n++
		}
	}
	return n
}

// ScanMark starts the scan's lines in a copier's output.
const ScanMark = "boxsnap-scan"

// ScanScript prints, after ScanMark, one line for each path under dir: its
// stat (mode, size, inode, owner, group, modification and change times to
// the nanosecond) and then its path. A change time moves on every write
// and cannot be set back, so a file whose line is the same did not change.
func ScanScript(dir string) string {
	return "echo " + ScanMark + " && cd " + dir + " && " + ScanFind
}

// ScanFind prints the stat line of each path under the folder it runs in.
const ScanFind = "/bin/busybox find . -exec /bin/busybox stat -c '%f|%s|%i|%u|%g|%y|%z|%n' {} +"

// ParseScan reads the scan's lines from a copier's output (what comes
// before ScanMark is the copy's own).
func ParseScan(out string) (VolumeState, string, error) {
	before, after, ok := strings.Cut(out, ScanMark+"\n")
	if !ok {
		return nil, out, errors.New("the volume's scan printed nothing")
	}
	st := VolumeState{}
	sc := bufio.NewScanner(strings.NewReader(after))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		i := nthIndex(line, '|', 7)
		if i < 0 {
			return nil, before, fmt.Errorf("the volume's scan printed %q", line)
		}
		st[line[i+1:]] = line[:i]
	}
	return st, before, sc.Err()
}

// nthIndex is the index of the nth sep in s, or -1.
func nthIndex(s string, sep byte, n int) int {
	for i := 0; i < len(s); i++ {
		if s[i] == sep {
			n--
			if n == 0 {
				return i
			}
		}
	}
	return -1
}
