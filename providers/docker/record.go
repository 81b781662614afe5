package docker

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/moby/moby/api/types/container"
)

// changeRecord is what boxsnap recorded of a box at its last take: every
// path of the container's writable layer (the engine's list of changes from
// its image) with its stat, every path of its volume with its stat, and the
// snapshot's image. A box whose layer and volume read the same as its
// record changed nothing since that take; a take after it needs only the
// paths whose stat differs.
type changeRecord struct {
	snap   string // the snapshot's ID
	image  string // its image's ID
	layers int    // how many layers its image has
	layer  layerState
	volume volumeState
	// volumeIn says the image holds the volume as volume reads
	// (labelVolumeIn), so a take on it needs only the volume's changes.
	volumeIn bool
}

// layerEntry is one path of a container's writable layer: deleted (a
// whiteout of the image's path), or there with its stat.
type layerEntry struct {
	deleted bool
	stat    container.PathStat
}

// layerState is the container's writable layer, path → entry.
type layerState map[string]layerEntry

// volumeState is the volume's files, path (relative, "./…") → stat line
// (mode, size, inode, owner, group, change and modification times to the
// nanosecond).
type volumeState map[string]string

// takeRecords holds each box's record by container ID, in this process,
// and (with Config.StateDir) in a file of each, read back after a restart
// (recordfile.go): a box with neither (or a box a restore made anew) has
// none, and its first check answers unknown.
type takeRecords struct {
	mu sync.Mutex
	by map[string]*changeRecord
	// read holds the containers whose record's file was read.
	read map[string]bool
	// graph is "yes" once the engine is known to keep images in its own
	// layer store, "no" when it keeps them in containerd's (whose load
	// wants every layer's content), "" before the first ask.
	graph string
}

func (r *takeRecords) put(container string, rec *changeRecord) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.by == nil {
		r.by = map[string]*changeRecord{}
	}
	r.by[container] = rec
}

// sameStat says whether two stats of a path read alike.
func sameStat(a, b container.PathStat) bool {
	return a.Size == b.Size && a.Mode == b.Mode && a.Mtime.Equal(b.Mtime) && a.LinkTarget == b.LinkTarget
}

// layerDelta is what changed in a container's layer since a record of it:
// the paths to read again (new, or their stat differs) and the paths gone
// (to whiteout in a layer on the record's image).
type layerDelta struct {
	changed, gone []string
}

func (d layerDelta) paths() int { return len(d.changed) + len(d.gone) }

// layerSince compares the layer now with the one recorded.
func layerSince(rec, now layerState) layerDelta {
	var d layerDelta
	for p, e := range now {
		old, had := rec[p]
		switch {
		case e.deleted && (!had || !old.deleted):
			d.gone = append(d.gone, p)
		case !e.deleted && (!had || old.deleted || !sameStat(old.stat, e.stat)):
			d.changed = append(d.changed, p)
		}
	}
	for p, old := range rec {
		if _, ok := now[p]; !ok && !old.deleted {
			d.gone = append(d.gone, p)
		}
	}
	return d
}

// volumeSince counts the volume's paths that are new, gone, or whose stat
// differs from the record's.
func volumeSince(rec, now volumeState) int {
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

// scanMark starts the scan's lines in a copier's output.
const scanMark = "boxsnap-scan"

// scanScript prints, after scanMark, one line for each path under dir: its
// stat (mode, size, inode, owner, group, modification and change times to
// the nanosecond) and then its path. A change time moves on every write
// and cannot be set back, so a file whose line is the same did not change.
func scanScript(dir string) string {
	return "echo " + scanMark + " && cd " + dir + " && " + scanFind
}

// scanFind prints the stat line of each path under the folder it runs in.
const scanFind = "/bin/busybox find . -exec /bin/busybox stat -c '%f|%s|%i|%u|%g|%y|%z|%n' {} +"

// parseScan reads the scan's lines from a copier's output (what comes
// before scanMark is the copy's own).
func parseScan(out string) (volumeState, string, error) {
	before, after, ok := strings.Cut(out, scanMark+"\n")
	if !ok {
		return nil, out, errors.New("the volume's scan printed nothing")
	}
	st := volumeState{}
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

// tempLayer is a file for a layer being written, in the host's temporary
// folder, removed by its cleanup.
func tempLayer() (*os.File, func(), error) {
	f, err := os.CreateTemp("", "boxsnap-layer-*.tar")
	if err != nil {
		return nil, nil, fmt.Errorf("make a file for the new layer: %w", err)
	}
	return f, func() { _ = f.Close(); _ = os.Remove(f.Name()) }, nil
}
