package hoststate

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// A take's pause, on a local engine with a state folder, freezes the box's
// cgroup directly (cgroup v1's freezer.state, v2's cgroup.freeze), which
// costs well under a millisecond where the engine's pause, through
// containerd and runc to the same freezer, costs tens. The engine is not
// told: it still says the box runs. So a freeze is recorded before it is
// made, in a held file naming the cgroup, and the backend's next start
// thaws every freeze whose file no live process holds: a boxsnap killed
// mid-pause never leaves a box frozen past its restart. Where the freezer
// cannot be reached the pause is the engine's; that pause is recorded too,
// so that the take's next try knows it for its own, and a box a person
// paused stays paused.

// pauseFolder is the folder of the state folder holding the records of the
// pauses takes hold.
const pauseFolder = "pauses"

// cgroupRoot is where the host's cgroups are mounted.
const cgroupRoot = "/sys/fs/cgroup"

// freezeWait bounds the wait for a cgroup to say it is frozen; past it the
// freeze is undone and the engine pauses the box instead.
const freezeWait = 2 * time.Second

// Freeze is a box frozen through its cgroup's freezer file.
type Freeze struct {
	file string // freezer.state (v1) or cgroup.freeze (v2)
	rec  *os.File
}

// FreezerFile answers the freezer file of a running container's cgroup,
// read from /proc/<pid>/cgroup of its first process, or "" where there is
// none this process may write: no state folder to record a freeze in, or
// a process that is not the container's here (the path must name the
// container's ID). A container whose cgroup is read here runs on this
// process's kernel.
func (s State) FreezerFile(pid int, id string) string {
	if s.Dir == "" || pid <= 0 || !IsContainerID(id) {
		return ""
	}
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	if err != nil {
		return ""
	}
	_, v2err := os.Stat(filepath.Join(cgroupRoot, "cgroup.controllers"))
	for line := range strings.SplitSeq(string(raw), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 || !strings.Contains(f[2], id) {
			continue
		}
		var p string
		switch {
		case slices.Contains(strings.Split(f[1], ","), "freezer"):
			p = filepath.Join(cgroupRoot, "freezer", f[2], "freezer.state")
		case f[0] == "0" && f[1] == "" && v2err == nil:
			p = filepath.Join(cgroupRoot, f[2], "cgroup.freeze")
		default:
			continue
		}
		if _, err := os.Stat(p); err == nil && freezerPath(p) {
			return p
		}
	}
	return ""
}

// IsContainerID says whether id is a container ID as the engine writes it.
func IsContainerID(id string) bool {
	return len(id) == 64 && strings.Trim(id, "0123456789abcdef") == ""
}

// freezerPath says whether p is a cgroup's freezer file: the only files a
// freeze's record may make the backend write.
func freezerPath(p string) bool {
	base := filepath.Base(p)
	return filepath.Clean(p) == p && strings.HasPrefix(p, cgroupRoot+"/") && (base == "freezer.state" || base == "cgroup.freeze")
}

// Freeze freezes a running container's cgroup, its freeze recorded first;
// nil where it cannot (the engine pauses the box then).
func (s State) Freeze(pid int, id string) *Freeze {
	file := s.FreezerFile(pid, id)
	if file == "" {
		return nil
	}
	rec, err := CreateHeld(filepath.Join(s.Dir, pauseFolder), id+"-*.freeze")
	if err == nil {
		if _, err = rec.WriteString(file); err != nil {
			DropHeld(rec)
		}
	}
	if err != nil {
		s.Log.Warn("a freeze could not be recorded; the engine pauses the box", "container", id, "err", err)
		return nil
	}
	f := &Freeze{file: file, rec: rec}
	if err := setFrozen(file, true); err != nil {
		_ = f.Thaw()
		s.Log.Warn("the box's cgroup could not be frozen; the engine pauses it", "container", id, "err", err)
		return nil
	}
	return f
}

// Thaw thaws the cgroup and drops the freeze's record.
func (f *Freeze) Thaw() error {
	err := setFrozen(f.file, false)
	if err == nil || errors.Is(err, os.ErrNotExist) {
		DropHeld(f.rec) // a cgroup gone is thawed: its container stopped
		return nil
	}
	return fmt.Errorf("thaw the box's cgroup: %w", err)
}

// setFrozen writes a freezer file and, to freeze, waits until the cgroup
// says all its processes are frozen.
func setFrozen(file string, frozen bool) error {
	v1 := filepath.Base(file) == "freezer.state"
	val := "0"
	switch {
	case v1 && frozen:
		val = "FROZEN"
	case v1:
		val = "THAWED"
	case frozen:
		val = "1"
	}
	if err := os.WriteFile(file, []byte(val), 0); err != nil || !frozen {
		return err
	}
	deadline := time.Now().Add(freezeWait)
	for {
		done, err := isFrozen(file, v1)
		if done || err != nil {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the cgroup was not frozen after %s", freezeWait)
		}
		// A process that was forking when the freeze began is caught by
		// freezing again (as runc does).
		time.Sleep(time.Millisecond)
		if v1 {
			_ = os.WriteFile(file, []byte("FROZEN"), 0)
		}
	}
}

// isFrozen reads whether every process of the cgroup is frozen.
func isFrozen(file string, v1 bool) (bool, error) {
	if v1 {
		raw, err := os.ReadFile(file)
		return strings.TrimSpace(string(raw)) == "FROZEN", err
	}
	raw, err := os.ReadFile(filepath.Join(filepath.Dir(file), "cgroup.events"))
	return strings.Contains(string(raw), "frozen 1"), err
}

// SweepAtStart removes the layers' files that takes killed mid-way left in
// the state folder, and thaws the boxes they left frozen.
func (s State) SweepAtStart() {
	if s.Dir == "" {
		return
	}
	if n, err := sweepLeft(filepath.Join(s.Dir, layerFolder), LayerPattern, nil); n > 0 || err != nil {
		s.Log.Info("layer files that takes cut short left were removed", "removed", n, "err", err)
	}
	s.thawLeft()
}

// thawLeft thaws the freezes that takes killed mid-pause left (their
// records no live process holds).
func (s State) thawLeft() {
	n, err := sweepLeft(filepath.Join(s.Dir, pauseFolder), "*.freeze", func(content []byte) error {
		file := string(content)
		if !freezerPath(file) {
			return nil // not a record boxsnap wrote: dropped, nothing written
		}
		if err := setFrozen(file, false); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		return nil
	})
	if n > 0 || err != nil {
		s.Log.Warn("boxes a take killed mid-pause left frozen were thawed", "thawed", n, "err", err)
	}
}

// RecordEnginePause records a pause the engine is asked for, before it is
// asked; nil without a state folder.
func (s State) RecordEnginePause(id string) *os.File {
	if s.Dir == "" || !IsContainerID(id) {
		return nil
	}
	rec, err := CreateHeld(filepath.Join(s.Dir, pauseFolder), id+"-*.pause")
	if err != nil {
		s.Log.Warn("a pause could not be recorded", "container", id, "err", err)
		return nil
	}
	return rec
}

// AdoptPause says whether a paused box's pause is a take's that a kill cut
// short, which the take's next try ends: with a state folder, only one
// recorded and held by no live process (a person's pause stays), recorded
// again first as this process's (the record answered, which the try drops
// once it ends the pause); without one nothing tells them apart, and every
// pause is taken for a take's.
func (s State) AdoptPause(id string) (bool, *os.File) {
	if s.Dir == "" {
		return true, nil
	}
	rec := s.RecordEnginePause(id)
	if rec == nil {
		return false, nil
	}
	n, err := sweepLeft(filepath.Join(s.Dir, pauseFolder), id+"-*.pause", nil)
	if err != nil {
		s.Log.Warn("the record of a take's pause could not be read", "container", id, "err", err)
	}
	if n == 0 {
		DropHeld(rec)
		return false, nil
	}
	return true, rec
}

// Adoptions holds, by container, the records of the pauses killed takes
// left that this process took on (AdoptPause), until a take ends them.
type Adoptions struct {
	mu sync.Mutex
	m  map[string]*os.File
}

// Adopt says whether a paused box's pause is a killed take's, which the
// next take ends, keeping its record; one this process took on already is.
func (a *Adoptions) Adopt(s State, id string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.m[id] != nil {
		return true
	}
	ours, rec := s.AdoptPause(id)
	if rec != nil {
		if a.m == nil {
			a.m = map[string]*os.File{}
		}
		a.m[id] = rec
	}
	return ours
}

// Take hands over the record of a pause this process took on.
func (a *Adoptions) Take(id string) *os.File {
	a.mu.Lock()
	defer a.mu.Unlock()
	rec := a.m[id]
	delete(a.m, id)
	return rec
}
