package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// clockTicks is the unit of /proc/PID/stat's CPU times (USER_HZ, 100 on
// Linux whatever the kernel's own tick).
const clockTicks = 100

// cpuOf is the CPU time (user and system) process pid has spent, read
// from /proc; 0 when it cannot be read.
func cpuOf(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The command's name, in parentheses, may hold spaces: the fields
	// are counted from its closing one (utime and stime are fields 14
	// and 15, the 12th and 13th after it).
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	s, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+s) * time.Second / clockTicks
}

// selfCPU is the CPU time this process has spent, all its threads.
func selfCPU() time.Duration {
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// profileDir, when set (-cpuprofile), gets a CPU profile of each of
// boxsnap's restores and forks onto another host.
var profileDir string

// profiled runs fn under a CPU profile written to profileDir/name, when
// profileDir is set.
func profiled(name string, fn func() error) error {
	if profileDir == "" {
		return fn()
	}
	if err := os.MkdirAll(profileDir, 0o755); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(profileDir, name))
	if err != nil {
		return err
	}
	defer f.Close()
	if err := pprof.StartCPUProfile(f); err != nil {
		return err
	}
	defer pprof.StopCPUProfile()
	return fn()
}

// loadAvg is the host's load averages (1, 5 and 15 minutes), as uptime
// says them: the machine may be shared.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}
