package state

import (
	"os"
	"strconv"
	"strings"

	"github.com/boxsnap/boxsnap/providers/local/process"
)

// ProcRecord is a box's running process as its state file records it.
type ProcRecord struct {
	// Pid is the process group's leader (bwrap where the box runs inside it),
	// 0 while a start that recorded its cgroup first has not recorded it.
	Pid int `json:"pid"`
	// Start is its start time (field 22 of /proc/<pid>/stat, clock ticks
	// since boot): a pid the kernel gave to another process is not it.
	Start uint64 `json:"start"`
	// Cgroup is its freezer cgroup (package process), or "" where there is none.
	Cgroup string `json:"cgroup,omitempty"`
	// Sandboxed is set when the leader is bwrap.
	Sandboxed bool `json:"sandboxed,omitempty"`
}

// ProcStart reads a process's start time, and whether it lives (a zombie
// does not).
func ProcStart(pid int) (uint64, bool) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+2 >= len(s) {
		return 0, false
	}
	// After the command's name: state (3), …, starttime (22).
	f := strings.Fields(s[i+2:])
	if len(f) < 20 || f[0] == "Z" || f[0] == "X" {
		return 0, false
	}
	start, err := strconv.ParseUint(f[19], 10, 64)
	if err != nil {
		return 0, false
	}
	return start, true
}

// RecordOf is the record of a process just started.
func RecordOf(pid int, cg string, sandboxed bool) *ProcRecord {
	start, _ := ProcStart(pid)
	return &ProcRecord{Pid: pid, Start: start, Cgroup: cg, Sandboxed: sandboxed}
}

// Alive says whether any process of the recorded start still runs: one in
// its cgroup, or its leader.
func (r *ProcRecord) Alive() bool {
	if r == nil {
		return false
	}
	if r.Cgroup != "" && len(process.CgroupProcs(r.Cgroup)) > 0 {
		return true
	}
	return r.LeaderAlive()
}

// Forget removes the freezer cgroup of a recorded process no longer alive,
// which its owner, dead before it ended, did not.
func (r *ProcRecord) Forget() {
	if r != nil && r.Cgroup != "" {
		_ = os.Remove(r.Cgroup) // gone already, or not empty: left as it is
	}
}

// LeaderAlive says whether the recorded leader is still the same process.
func (r *ProcRecord) LeaderAlive() bool {
	if r.Pid <= 0 {
		return false // recorded before its process started (recordStarting)
	}
	start, ok := ProcStart(r.Pid)
	return ok && start == r.Start
}
