package docker

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/moby/moby/api/types/container"
)

// A take's pause, on a local engine with a state folder, freezes the box's
// cgroup directly (cgroup v1's freezer.state, v2's cgroup.freeze), which
// costs well under a millisecond where the engine's pause, through
// containerd and runc to the same freezer, costs tens. The engine is not
// told: it still says the box runs. So a freeze is recorded before it is
// made, in a held file of the state folder naming the cgroup (heldfiles.go),
// and the backend's next start thaws every freeze whose file no live
// process holds: a boxsnap killed mid-pause never leaves a box frozen past
// its restart. Where the freezer cannot be reached (a remote engine, boxsnap
// in another process namespace than the engine, no state folder) the pause
// is the engine's; that pause is recorded too, so that the take's next try
// knows it for its own, and a box a person paused stays paused.

// freezeFolder is the folder of the state folder holding the records of
// the pauses takes hold.
const freezeFolder = "pauses"

// cgroupRoot is where the host's cgroups are mounted.
const cgroupRoot = "/sys/fs/cgroup"

// freezeWait bounds the wait for a cgroup to say it is frozen; past it the
// freeze is undone and the engine pauses the box instead.
const freezeWait = 2 * time.Second

// cgroupFreeze is a box frozen through its cgroup's freezer file.
type cgroupFreeze struct {
	file string // freezer.state (v1) or cgroup.freeze (v2)
	rec  *os.File
}

// freezerFile answers the freezer file of a running container's cgroup,
// read from /proc/<pid>/cgroup of its first process, or "" where there is
// none this process may write: a remote engine, no state folder to record
// a freeze in, or a process that is not the container's here (the path
// must name the container's ID).
func (e *engine) freezerFile(c container.InspectResponse) string {
	if e.cfg.StateDir == "" || !e.local() || c.State == nil || c.State.Pid <= 0 || !isContainerID(c.ID) {
		return ""
	}
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", c.State.Pid))
	if err != nil {
		return ""
	}
	_, v2err := os.Stat(filepath.Join(cgroupRoot, "cgroup.controllers"))
	for line := range strings.SplitSeq(string(raw), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 || !strings.Contains(f[2], c.ID) {
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
		if freezerPath(p) && fileThere(p) {
			return p
		}
	}
	return ""
}

// isContainerID says whether id is a container ID as the engine writes it.
func isContainerID(id string) bool {
	return len(id) == 64 && strings.Trim(id, "0123456789abcdef") == ""
}

// freezerPath says whether p is a cgroup's freezer file: the only files a
// freeze's record may make the backend write.
func freezerPath(p string) bool {
	base := filepath.Base(p)
	return filepath.Clean(p) == p && strings.HasPrefix(p, cgroupRoot+"/") && (base == "freezer.state" || base == "cgroup.freeze")
}

func fileThere(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// freeze freezes a running container's cgroup, its freeze recorded first;
// nil where it cannot (the engine pauses the box then).
func (e *engine) freeze(c container.InspectResponse) *cgroupFreeze {
	file := e.freezerFile(c)
	if file == "" {
		return nil
	}
	rec, err := createHeld(filepath.Join(e.cfg.StateDir, freezeFolder), c.ID+"-*.freeze")
	if err == nil {
		_, err = rec.WriteString(file)
	}
	if err != nil {
		e.log.Warn("a freeze could not be recorded; the engine pauses the box", "container", c.ID, "err", err)
		if rec != nil {
			dropHeld(rec)
		}
		return nil
	}
	f := &cgroupFreeze{file: file, rec: rec}
	if err := setFrozen(file, true); err != nil {
		_ = f.thaw()
		e.log.Warn("the box's cgroup could not be frozen; the engine pauses it", "container", c.ID, "err", err)
		return nil
	}
	return f
}

// thaw thaws the cgroup and drops the freeze's record.
func (f *cgroupFreeze) thaw() error {
	err := setFrozen(f.file, false)
	if err == nil || errors.Is(err, os.ErrNotExist) {
		dropHeld(f.rec) // a cgroup gone is thawed: its container stopped
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

// dropHeld removes a held file and lets its lock go.
func dropHeld(f *os.File) {
	_ = os.Remove(f.Name())
	_ = f.Close()
}

// thawLeft thaws the freezes that takes killed mid-pause left (their
// records no live process holds).
func (e *engine) thawLeft() {
	n, err := sweepLeft(filepath.Join(e.cfg.StateDir, freezeFolder), "*.freeze", func(_ string, content []byte) error {
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
		e.log.Warn("boxes a take killed mid-pause left frozen were thawed", "thawed", n, "err", err)
	}
}

// recordEnginePause records a pause the engine is asked for, before it is
// asked; nil without a state folder.
func (e *engine) recordEnginePause(id string) *os.File {
	if e.cfg.StateDir == "" || !isContainerID(id) {
		return nil
	}
	rec, err := createHeld(filepath.Join(e.cfg.StateDir, freezeFolder), id+"-*.pause")
	if err != nil {
		e.log.Warn("a pause could not be recorded", "container", id, "err", err)
		return nil
	}
	return rec
}

// pauseIsOurs says whether a paused box's pause is a take's that a kill cut
// short, which the take's next try ends: with a state folder, only one
// recorded and held by no live process (a person's pause stays); without
// one nothing tells them apart, and every pause is taken for a take's.
func (e *engine) pauseIsOurs(id string) bool {
	if e.cfg.StateDir == "" {
		return true
	}
	if !isContainerID(id) {
		return false
	}
	n, err := sweepLeft(filepath.Join(e.cfg.StateDir, freezeFolder), id+"-*.pause", nil)
	if err != nil {
		e.log.Warn("the record of a take's pause could not be read", "container", id, "err", err)
	}
	return n > 0
}
