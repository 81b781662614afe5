package process

import (
	"os"
	"strconv"
	"strings"
)

// GroupStopped reads /proc to say whether no process of the group can run:
// each is stopped (T), a zombie, or in an uninterruptible wait (D, as a
// parent waiting for a stopped vfork child is), which it leaves only to stop.
// A process still running or sleeping interruptibly (R, S) has not yet taken
// its SIGSTOP.
func GroupStopped(pgid int) bool {
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return true
	}
	for _, p := range procs {
		if p.Name()[0] < '0' || p.Name()[0] > '9' {
			continue
		}
		data, err := os.ReadFile("/proc/" + p.Name() + "/stat")
		if err != nil {
			continue
		}
		i := strings.LastIndexByte(string(data), ')')
		if i < 0 || i+2 >= len(data) {
			continue
		}
		// After the command's name: state, ppid, pgrp.
		fields := strings.Fields(string(data[i+2:]))
		if len(fields) < 3 || fields[2] != strconv.Itoa(pgid) {
			continue
		}
		if fields[0] == "R" || fields[0] == "S" {
			return false
		}
	}
	return true
}
