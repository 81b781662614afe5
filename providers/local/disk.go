package local

import (
	"context"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/local/disks"
	"github.com/boxsnap/boxsnap/providers/local/process"
	"github.com/boxsnap/boxsnap/providers/local/state"
)

// DefaultDiskBytes bounds what a box's folder holds on disk, when its
// template sets no bound and Config.DiskBytes is 0: the size of its own
// file system (package disks), or where it has none, what the watch lets its
// folder hold while its process runs.
const DefaultDiskBytes = 16 << 30

// diskCheckEvery is how often a running box's disk use is measured.
const diskCheckEvery = 100 * time.Millisecond

// diskBound is the box's disk bound: its template's, or else the
// backend's, dflt (Config.DiskBytes), or DefaultDiskBytes when that is 0.
func diskBound(lim providers.BoxLimits, dflt int64) int64 {
	if lim.DiskBytes > 0 {
		return lim.DiskBytes
	}
	if dflt > 0 {
		return dflt
	}
	return DefaultDiskBytes
}

// watchDisk bounds the disk use of a running box with no file system of
// its own (package disks), not to the byte: each process of the box
// already gets EFBIG past the bound in one file (prlimit --fsize); this
// measures the whole folder every diskCheckEvery (less often for a folder
// whose measure takes over a tenth of that) and, past the bound,
// freezes the box's processes at once (its freezer cgroup, else SIGSTOP to
// its group) and kills them frozen, so nothing more is written, writes why
// in its log, records it in its state and marks it stopped. Nothing of its
// files is removed. It ends with the process.
func (b *Backend) watchDisk(box, dir string, p *proc, bound int64, logf *os.File) {
	wait := diskCheckEvery
	for {
		timer := time.NewTimer(wait)
		select {
		case <-p.done:
			timer.Stop()
			return
		case <-timer.C:
		}
		t0 := time.Now()
		used, err := b.DiskUse(context.Background(), dir)
		// A large folder is measured less often: the watch takes at most
		// a tenth of one core. Near its bound a box is measured at the
		// base cadence whatever a measure took (on a busy host a measure
		// takes longer in time, not in work), so a burst has less time to
		// pass the bound.
		wait = max(diskCheckEvery, 10*time.Since(t0))
		if err == nil && used > bound-bound/4 {
			wait = diskCheckEvery / 2
		}
		if err != nil || used <= bound {
			continue
		}
		// Frozen, then killed while frozen: a frozen process dies at the
		// thaw without running again, so it writes nothing more. Under
		// b.mu, and only while p is still the box's: a stop under way
		// (which removes it first) is never frozen behind its back.
		b.mu.Lock()
		if b.procs[box] != p {
			b.mu.Unlock()
			return
		}
		pgid := p.cmd.Process.Pid
		// The line goes in the box's log before its processes end: their
		// end closes the log (watchProcess), and a line written after
		// would be lost.
		_, _ = fmt.Fprintf(logf, "boxsnap: stopped at the disk bound: bound=%d bytes used=%d bytes\n", bound, used)
		if p.cgroup != "" {
			_, _ = process.Freeze(p.cgroup, time.Second)
			for _, pid := range process.CgroupProcs(p.cgroup) {
				if pid != os.Getpid() {
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
			}
		} else {
			_ = syscall.Kill(-pgid, syscall.SIGSTOP)
		}
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		if p.cgroup != "" {
			_ = process.Thaw(p.cgroup)
		}
		b.mu.Unlock()
		b.log.Warn("local backend: a box reached its disk bound and is stopped", "box", box, "bound", bound, "used", used)
		// Stopped first, then said: a status that says the box stopped at
		// its bound never says it runs.
		_ = b.Stop(context.Background(), b.guestOf(box, ""))
		_ = b.UpdateState(box, func(st *state.BoxState) { st.DiskStop = &providers.DiskStop{BoundBytes: bound, UsedBytes: used} })
		return
	}
}

// watchRoom watches a running box whose own file system bounds its disk
// (package disks): the kernel refuses each write past the bound, so nothing is
// stopped; a statfs every diskCheckEvery notices when a write in the box
// fails (at its bound, out of files, or the host full), and writes why once
// in the box's log and boxsnap's, and again when room is made. It ends
// with the process.
func (b *Backend) watchRoom(box, dir string, p *proc, bound int64, logf *os.File) {
	var was disks.Fullness
	for {
		timer := time.NewTimer(diskCheckEvery)
		select {
		case <-p.done:
			timer.Stop()
			return
		case <-timer.C:
		}
		r, err := disks.RoomOf(dir)
		if err != nil {
			continue
		}
		why := r.Why(b.Grow.HostRefused(box))
		if why == was {
			continue
		}
		was = why
		// Under b.mu, and only while p is still the box's: its end closes
		// the log.
		b.mu.Lock()
		if b.procs[box] != p {
			b.mu.Unlock()
			return
		}
		switch why {
		case disks.FullHost:
			// The box's log is on the host too: when it cannot be
			// written, it is not told, nor told later that room came.
			if _, err := fmt.Fprintf(logf, logHostFullWords, disks.Mib(bound), disks.Mib(r.Used())); err != nil {
				was = ""
			}
		case disks.FullOfFiles:
			_, _ = fmt.Fprintf(logf, logNoFilesWords, r.Files, disks.Mib(bound), disks.Mib(r.Used()))
		case disks.FullAtBound:
			_, _ = fmt.Fprintf(logf, logFullWords, disks.Mib(bound), disks.Mib(r.Used()))
		default:
			_, _ = fmt.Fprintf(logf, logRoomWords, disks.Mib(bound), disks.Mib(r.Used()))
		}
		b.mu.Unlock()
		switch why {
		case disks.FullAtBound:
			b.log.Warn("local backend: a box reached its disk bound: its writes past it fail, and it runs on", "box", box, "bound", bound, "used", r.Used())
		case disks.FullOfFiles:
			b.log.Warn("local backend: a box reached its limit of files: a new file in it fails, and it runs on", "box", box, "files", r.Files, "bound", bound)
		}
	}
}
