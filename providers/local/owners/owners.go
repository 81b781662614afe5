package owners

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/boxsnap/boxsnap/providers/local/process"
	"github.com/boxsnap/boxsnap/providers/local/state"
	"github.com/boxsnap/boxsnap/providers/local/store"
)

// PauseWait bounds the wait for a paused process group to show it stopped.
const PauseWait = time.Second

// Owners ends, pauses and cleans up after the box processes that another
// boxsnap process on this data folder started, as the box's state file
// records them, and locks a box against the others.
type Owners struct {
	*store.Store
	*process.Processes
	// Log receives the owners' logs.
	Log *slog.Logger
	// StopTO bounds a stop's wait after SIGTERM (Config.StopTimeout).
	StopTO time.Duration
}

// LockBox takes the box's file lock, shared by every boxsnap process on the
// data folder, and answers the function that lets it go. Taken before b.mu,
// never while holding it.
func (b *Owners) LockBox(box string) (func(), error) {
	return store.LockFile(b.Path(store.DirState, box+".lock"), "box "+box+"'s lock")
}

// EndRecorded ends a box's process that another boxsnap process started
// (or one that outlived its dead owner), as Stop ends its own: SIGTERM to
// every process of it (inside bubblewrap, all but bwrap, so the box's own
// processes end as they choose), SIGKILL to what is left after the stop's
// bound, and its cgroup removed once empty.
func (b *Owners) EndRecorded(ctx context.Context, box string, r *state.ProcRecord) {
	members := func() []int {
		var out []int
		if r.Cgroup != "" {
			for _, pid := range process.CgroupProcs(r.Cgroup) {
				if pid != os.Getpid() {
					out = append(out, pid)
				}
			}
		}
		if r.LeaderAlive() {
			for _, pid := range process.GroupMembers(r.Pid) {
				out = append(out, pid)
			}
		}
		return out
	}
	if r.Cgroup != "" {
		_ = process.Thaw(r.Cgroup)
	}
	for _, pid := range members() {
		if !r.Sandboxed || pid != r.Pid {
			_ = syscall.Kill(pid, syscall.SIGTERM)
		}
		_ = syscall.Kill(pid, syscall.SIGCONT)
	}
	deadline := time.Now().Add(b.StopTO)
	for len(members()) > 0 && time.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(5 * time.Millisecond)
	}
	deadline = time.Now().Add(process.CgroupWait)
	for left := members(); len(left) > 0; left = members() {
		if time.Now().After(deadline) {
			b.Log.Warn("local backend: processes of a box outlived SIGKILL", "box", box, "pids", left)
			return
		}
		for _, pid := range left {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(2 * time.Millisecond)
	}
	if r.Cgroup != "" {
		// Its owner, where it lives, removes it too: whichever is first.
		if err := os.Remove(r.Cgroup); err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.EBUSY) {
			b.Log.Warn("local backend: a box's freezer cgroup was not removed", "box", box, "cgroup", r.Cgroup, "err", err)
		}
	}
}

// PauseRecorded is pause for a box whose process another boxsnap process on
// this data folder started: its cgroup is frozen whole, or, where it has
// none, its process group is stopped.
func (b *Owners) PauseRecorded(box string, r *state.ProcRecord) (func() time.Duration, bool) {
	none := func() time.Duration { return 0 }
	if !r.Alive() {
		return none, false
	}
	start := time.Now()
	if r.Cgroup != "" {
		all, err := process.Freeze(r.Cgroup, PauseWait)
		if err == nil {
			if !all {
				b.Log.Warn("local backend: not every process of the box was frozen in time; the take goes on", "box", box, "wait", PauseWait)
			}
			return func() time.Duration {
				if err := process.Thaw(r.Cgroup); err != nil && !errors.Is(err, fs.ErrNotExist) {
					b.Log.Error("local backend: the box's processes could not be thawed", "box", box, "cgroup", r.Cgroup, "err", err)
				}
				return time.Since(start)
			}, true
		}
		_ = process.Thaw(r.Cgroup)
	}
	if !r.LeaderAlive() || syscall.Kill(-r.Pid, syscall.SIGSTOP) != nil {
		return none, false
	}
	deadline := time.Now().Add(PauseWait)
	for time.Now().Before(deadline) && !process.GroupStopped(r.Pid) {
		time.Sleep(200 * time.Microsecond)
	}
	return func() time.Duration {
		_ = syscall.Kill(-r.Pid, syscall.SIGCONT)
		return time.Since(start)
	}, true
}

// CleanCgroups removes the empty box cgroups this backend made that a crash
// left: a box process's cgroup is removed when it ends (endFreezer), but
// not when boxsnap itself was killed first. Only this backend's own are
// looked at (their names carry its tag, cgroupTag), each under its box's
// lock, so that no start is between making its cgroup and starting its
// process in it; one with any process in it is kept (and the kernel
// refuses to remove it anyway). A running box's live process keeps its
// cgroup by that rule; an empty one is left by a process that ended. It
// runs once, at the first RestartRunning or TakeOver.
func (b *Owners) CleanCgroups() {
	c := b.BoxCgroups()
	if c.Root == "" {
		return
	}
	ents, err := os.ReadDir(c.Root)
	if err != nil {
		b.Log.Warn("local backend: the box cgroups a crash left cannot be listed", "cgroups", c.Root, "err", err)
		return
	}
	tag := "-" + b.CgroupTag() + "-"
	removed := 0
	for _, e := range ents {
		i := strings.LastIndex(e.Name(), tag)
		if !e.IsDir() || i <= 0 {
			continue
		}
		box, cg := e.Name()[:i], filepath.Join(c.Root, e.Name())
		if store.CheckID("box", box) != nil {
			continue
		}
		if b.removeLeftCgroup(box, cg) {
			removed++
		}
	}
	if removed > 0 {
		b.Log.Info("local backend: removed the empty box cgroups a crash left", "count", removed, "cgroups", c.Root)
	}
}

// removeLeftCgroup removes the box's cgroup cg if no process is in it,
// under the box's lock where the box has a state file (a released box has
// none, and no start of it can come).
func (b *Owners) removeLeftCgroup(box, cg string) bool {
	if _, err := os.Stat(b.StateFile(box)); err == nil {
		unlock, err := b.LockBox(box)
		if err != nil {
			return false
		}
		defer unlock()
	}
	if procs := process.CgroupProcs(cg); len(procs) > 0 {
		return false
	}
	if err := os.Remove(cg); err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			b.Log.Warn("local backend: a box cgroup a crash left was not removed", "box", box, "cgroup", cg, "err", err)
		}
		return false
	}
	return true
}
