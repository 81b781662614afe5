package hoststate

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// A take's mark is an empty file of the state folder named for the
// snapshot, made before the take's first part and removed when the take
// ends (or by the snapshot's delete); a kill leaves it, and the take's next
// try takes the snapshot again.

// takeFolder is the folder of the state folder holding the takes' marks.
const takeFolder = "takes"

// takeMark is the file of a take's mark, or "" where there is none: no
// state folder, or a snapshot ID that is not a plain name.
func (s State) takeMark(snap string) string {
	if s.Dir == "" || snap == "" || len(snap) > 128 ||
		strings.Trim(snap, "abcdefghijklmnopqrstuvwxyz0123456789-_") != "" {
		return ""
	}
	return filepath.Join(s.Dir, takeFolder, snap)
}

// MarkTake marks a take at work and answers what ends the mark; false
// where the take cannot be marked.
func (s State) MarkTake(snap string) (func(), bool) {
	p := s.takeMark(snap)
	if p == "" {
		return nil, false
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return nil, false
	}
	if err := os.WriteFile(p, nil, 0o600); err != nil {
		return nil, false
	}
	return func() { _ = os.Remove(p) }, true
}

// TakeMarked says whether a take of the snapshot is at work, or was cut
// short by a kill and is to be taken again.
func (s State) TakeMarked(snap string) bool {
	p := s.takeMark(snap)
	if p == "" {
		return false
	}
	_, err := os.Stat(p)
	return err == nil
}

// UnmarkTake removes a take's mark.
func (s State) UnmarkTake(snap string) {
	if p := s.takeMark(snap); p != "" {
		_ = os.Remove(p)
	}
}

// ChangeTime reads a path's change time in a container's layer folder
// (upper); zero where it cannot. Only a time is read, never a content.
func ChangeTime(upper, p string) time.Time {
	if upper == "" {
		return time.Time{}
	}
	var st syscall.Stat_t
	if err := syscall.Lstat(filepath.Join(upper, filepath.Clean("/"+p)), &st); err != nil {
		return time.Time{}
	}
	return time.Unix(st.Ctim.Sec, st.Ctim.Nsec)
}

// Uppers holds each container's writable layer folder on this host, or ""
// for none, asked of the engine once a container: the engine's stat of a
// layer's path has no change time, and a write that sets the modification
// time back (tar's, cp -p's, the archive endpoint's) and keeps the size
// would read as no change; on a local engine keeping the layer in an
// overlay2 folder the change time is read there (ChangeTime).
type Uppers struct {
	mu sync.Mutex
	m  map[string]string
}

// Of answers the container's layer folder; ask reads the engine's graph
// driver and its data (false where the engine did not answer: asked again
// next time).
func (u *Uppers) Of(id string, ask func() (string, map[string]string, bool)) string {
	u.mu.Lock()
	dir, ok := u.m[id]
	u.mu.Unlock()
	if ok {
		return dir
	}
	driver, data, ok := ask()
	if !ok {
		return ""
	}
	if driver == "overlay2" {
		dir = data["UpperDir"]
	}
	if st, err := os.Stat(dir); dir == "" || !filepath.IsAbs(dir) || err != nil || !st.IsDir() {
		dir = ""
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.m == nil {
		u.m = map[string]string{}
	}
	u.m[id] = dir
	return dir
}
