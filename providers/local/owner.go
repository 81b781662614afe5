package local

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/boxsnap/boxsnap/providers/local/process"
	"github.com/boxsnap/boxsnap/providers/local/state"
	"github.com/boxsnap/boxsnap/providers/local/store"
	"golang.org/x/sys/unix"
)

// Several boxsnap processes on one host may share one data folder (web and
// workers, as the README's Procfile runs them). A box's process then runs
// in exactly one of them, its owner: the state file records the owner (an
// opaque name the caller gives, SetOwner) and the running process (state.ProcRecord),
// so that any of them can find, freeze and end it, whichever started it. A
// per-box file lock (state/<box>.lock) makes each start, stop and takeover
// whole across processes: a start that finds the box's process alive under
// another process starts none. Processes on different hosts, with data
// folders of their own, cannot share a local box at all.

// SetOwner names this process as the owner of the box processes it starts
// from now on: RestartRunning's successor, TakeOver, then starts only the
// boxes whose owner is gone. An empty name (the default) keeps the one-
// process behaviour: RestartRunning starts every box marked running.
func (b *Backend) SetOwner(name string) {
	b.mu.Lock()
	b.owner = name
	b.mu.Unlock()
}

// LeaveProcesses makes this process run no box process: a Start here marks
// the box running with no owner, and a process that owns boxes starts it
// (TakeOver). The web process with --workers=false is one.
func (b *Backend) LeaveProcesses() {
	b.mu.Lock()
	b.leave = true
	b.mu.Unlock()
}

// Owner is the name SetOwner gave, or "".
func (b *Backend) Owner() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.owner
}

// BoxOwner is the recorded owner of the box's process: the process that
// started it last, "" for none.
func (b *Backend) BoxOwner(box string) (string, error) {
	if err := store.CheckID("box", box); err != nil {
		return "", err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	st, err := b.ReadState(box)
	return st.Owner, err
}

// lockBox takes the box's file lock, shared by every boxsnap process on the
// data folder, and answers the function that lets it go. Taken before b.mu,
// never while holding it.
func (b *Backend) lockBox(box string) (func(), error) {
	f, err := os.OpenFile(b.Path(store.DirState, box+".lock"), os.O_RDWR|os.O_CREATE|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("box %s's lock: %w", box, err)
	}
	for {
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("box %s's lock: %w", box, err)
	}
	return func() { f.Close() }, nil
}

// endRecorded ends a box's process that another boxsnap process started
// (or one that outlived its dead owner), as Stop ends its own: SIGTERM to
// every process of it (inside bubblewrap, all but bwrap, so the box's own
// processes end as they choose), SIGKILL to what is left after the stop's
// bound, and its cgroup removed once empty.
func (b *Backend) endRecorded(ctx context.Context, box string, r *state.ProcRecord) {
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
	deadline := time.Now().Add(b.stopTO)
	for len(members()) > 0 && time.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(5 * time.Millisecond)
	}
	deadline = time.Now().Add(process.CgroupWait)
	for left := members(); len(left) > 0; left = members() {
		if time.Now().After(deadline) {
			b.log.Warn("local backend: processes of a box outlived SIGKILL", "box", box, "pids", left)
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
			b.log.Warn("local backend: a box's freezer cgroup was not removed", "box", box, "cgroup", r.Cgroup, "err", err)
		}
	}
}

// TakeOver starts, in this process, the processes of the boxes marked
// running whose recorded owner is gone (alive answers false for it, or none
// is recorded): what is left of the old start is ended first (a process
// not inside bubblewrap outlives its parent), so the box's process runs
// once, here. A box whose owner lives is left to it, even when its command
// ended by itself. With alive nil, only the boxes with no owner recorded
// (marked running by a process that leaves processes) are taken. It answers
// the boxes it started. Without SetOwner it does what RestartRunning does.
// The first call removes the empty box cgroups a crash left (cleanCgroups).
func (b *Backend) TakeOver(ctx context.Context, alive func(ctx context.Context, owner string) (bool, error)) ([]string, error) {
	self := b.Owner()
	if self == "" {
		return b.RestartRunning(ctx)
	}
	b.cleanOnce.Do(b.cleanCgroups)
	b.MountImages()
	files, err := os.ReadDir(b.Path(store.DirState))
	if err != nil {
		return nil, fmt.Errorf("take over boxes: %w", err)
	}
	var started []string
	for _, f := range files {
		box, ok := strings.CutSuffix(f.Name(), ".json")
		if !ok || store.CheckID("box", box) != nil {
			continue
		}
		b.mu.Lock()
		st, err := b.ReadState(box)
		b.mu.Unlock()
		if err != nil || !st.Running {
			continue
		}
		if st.Command == "" {
			b.StartJournal(box, b.Store.BoxDir(box))
			continue
		}
		if st.Owner == self {
			continue
		}
		if st.Owner != "" && alive == nil {
			continue
		}
		if st.Owner != "" {
			live, err := alive(ctx, st.Owner)
			if err != nil {
				return started, fmt.Errorf("take over box %s: %w", box, err)
			}
			if live {
				continue
			}
		}
		took, err := b.takeOver(ctx, box, self, st.Owner)
		if err != nil {
			return started, err
		}
		if took {
			started = append(started, box)
		}
	}
	return started, nil
}

// takeOver is TakeOver of one box whose owner, gone, was judged gone
// (alive answered false, or "" for none recorded), under its lock. A box
// another process took meanwhile is left to it: its owner is not the one
// judged gone. The recorded process is ended before another starts, and
// none starts while any of it lives; and a start the state file cannot
// record is ended (endStarted), so that no process of the box runs that no
// state file names.
func (b *Backend) takeOver(ctx context.Context, box, self, gone string) (bool, error) {
	dir, err := b.existingBox(b.guestOf(box, ""))
	if err != nil {
		return false, nil // released meanwhile
	}
	unlock, err := b.lockBox(box)
	if err != nil {
		return false, err
	}
	defer unlock()
	b.mu.Lock()
	st, err := b.ReadState(box)
	b.mu.Unlock()
	if err != nil || !st.Running || st.Command == "" || st.Owner == self || st.Owner != gone {
		return false, err // stopped, or taken, meanwhile
	}
	if st.Proc.Alive() {
		b.log.Info("local backend: ending what is left of a box's process whose owner is gone", "box", box, "owner", st.Owner)
		b.endRecorded(ctx, box, st.Proc)
		if st.Proc.Alive() {
			return false, fmt.Errorf("take over box %s: the process its gone owner %s started still runs, so none is started here", box, st.Owner)
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	st, err = b.ReadState(box)
	if err != nil {
		return false, err
	}
	st.Proc.Forget()
	st.Proc = nil
	if err := b.startLocked(dir, box, &st); err != nil {
		return false, fmt.Errorf("start box %s: %w", box, err)
	}
	if err := b.WriteState(st); err != nil {
		b.endStarted(box)
		return false, fmt.Errorf("take over box %s: its state file does not record the process, so it was ended: %w", box, err)
	}
	b.StartJournal(box, dir)
	return true, nil
}

// endStarted kills at once the box's process this process started, with
// all of its freezer cgroup, and waits until it has ended: a start whose
// record could not be written (a full disk) leaves no process that another
// boxsnap process on the data folder cannot find. Called with b.mu held.
func (b *Backend) endStarted(box string) {
	p := b.procs[box]
	if p == nil || p.exited() {
		return
	}
	delete(b.procs, box)
	if p.cgroup != "" {
		_ = process.Thaw(p.cgroup)
		for _, pid := range process.CgroupProcs(p.cgroup) {
			if pid != os.Getpid() {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	<-p.done
}

// pauseRecorded is pause for a box whose process another boxsnap process on
// this data folder started: its cgroup is frozen whole, or, where it has
// none, its process group is stopped.
func (b *Backend) pauseRecorded(box string, r *state.ProcRecord) (func() time.Duration, bool) {
	none := func() time.Duration { return 0 }
	if !r.Alive() {
		return none, false
	}
	start := time.Now()
	if r.Cgroup != "" {
		all, err := process.Freeze(r.Cgroup, pauseWait)
		if err == nil {
			if !all {
				b.log.Warn("local backend: not every process of the box was frozen in time; the take goes on", "box", box, "wait", pauseWait)
			}
			return func() time.Duration {
				if err := process.Thaw(r.Cgroup); err != nil && !errors.Is(err, fs.ErrNotExist) {
					b.log.Error("local backend: the box's processes could not be thawed", "box", box, "cgroup", r.Cgroup, "err", err)
				}
				return time.Since(start)
			}, true
		}
		_ = process.Thaw(r.Cgroup)
	}
	if !r.LeaderAlive() || syscall.Kill(-r.Pid, syscall.SIGSTOP) != nil {
		return none, false
	}
	deadline := time.Now().Add(pauseWait)
	for time.Now().Before(deadline) && !groupStopped(r.Pid) {
		time.Sleep(200 * time.Microsecond)
	}
	return func() time.Duration {
		_ = syscall.Kill(-r.Pid, syscall.SIGCONT)
		return time.Since(start)
	}, true
}

// cleanCgroups removes the empty box cgroups this backend made that a crash
// left: a box process's cgroup is removed when it ends (endFreezer), but
// not when boxsnap itself was killed first. Only this backend's own are
// looked at (their names carry its tag, cgroupTag), each under its box's
// lock, so that no start is between making its cgroup and starting its
// process in it; one with any process in it is kept (and the kernel
// refuses to remove it anyway). A running box's live process keeps its
// cgroup by that rule; an empty one is left by a process that ended. It
// runs once, at the first RestartRunning or TakeOver.
func (b *Backend) cleanCgroups() {
	c := b.BoxCgroups()
	if c.Root == "" {
		return
	}
	ents, err := os.ReadDir(c.Root)
	if err != nil {
		b.log.Warn("local backend: the box cgroups a crash left cannot be listed", "cgroups", c.Root, "err", err)
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
		b.log.Info("local backend: removed the empty box cgroups a crash left", "count", removed, "cgroups", c.Root)
	}
}

// removeLeftCgroup removes the box's cgroup cg if no process is in it,
// under the box's lock where the box has a state file (a released box has
// none, and no start of it can come).
func (b *Backend) removeLeftCgroup(box, cg string) bool {
	if _, err := os.Stat(b.StateFile(box)); err == nil {
		unlock, err := b.lockBox(box)
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
			b.log.Warn("local backend: a box cgroup a crash left was not removed", "box", box, "cgroup", cg, "err", err)
		}
		return false
	}
	return true
}
