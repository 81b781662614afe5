package local

import (
	"context"
	"fmt"
	"os"
	"strings"
	"syscall"

	"github.com/boxsnap/boxsnap/providers/local/process"
	"github.com/boxsnap/boxsnap/providers/local/store"
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
	b.cleanOnce.Do(b.CleanCgroups)
	resets{b}.mountAll()
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
	unlock, err := b.LockBox(box)
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
		b.EndRecorded(ctx, box, st.Proc)
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
