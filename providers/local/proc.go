package local

import (
	"os"
	"os/exec"
	"syscall"

	"github.com/boxsnap/boxsnap/providers/local/process"
)

// proc is a box's running process group.
type proc struct {
	cmd  *exec.Cmd
	done chan struct{}
	// sandboxed is set when the process runs inside bubblewrap.
	sandboxed bool
	// cgroup is the process's freezer cgroup (process.go), or "" where
	// there is none: a take then stops its process group only (SIGSTOP).
	cgroup string
	// pasta is the user-mode network stack of the box's network
	// namespace (network.go), or nil; it is ended with the process.
	pasta *exec.Cmd
}

// terminate sends SIGTERM to the box's process group. Inside bubblewrap the
// group's leader is bwrap itself, which dies of SIGTERM and takes the whole
// sandbox with it: there each process of the group but the leader gets it,
// so the box's own processes end as they choose, or are killed with the
// group after the stop's bound, as without bubblewrap.
//
// A box in a freezer cgroup is thawed (a frozen process acts on no signal),
// and every process in the cgroup gets SIGTERM too, one that left the group
// (setsid) as well; what is left when the leader has ended is killed then
// (endFreezer).
func (p *proc) terminate() {
	pgid := p.cmd.Process.Pid
	if p.cgroup != "" {
		_ = process.Thaw(p.cgroup)
		for _, pid := range process.CgroupProcs(p.cgroup) {
			if pid != os.Getpid() && (!p.sandboxed || pid != pgid) {
				_ = syscall.Kill(pid, syscall.SIGTERM)
			}
		}
	}
	if !p.sandboxed {
		_ = syscall.Kill(-pgid, syscall.SIGTERM)
		return
	}
	for _, pid := range process.GroupMembers(pgid) {
		if pid != pgid {
			_ = syscall.Kill(pid, syscall.SIGTERM)
		}
	}
}
