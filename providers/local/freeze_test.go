package local

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/boxsnap/boxsnap/providers"
)

// TestTakeFreezesEveryProcess: a box process that leaves the box's
// process group and session (setsid) is still paused for a take: the file
// it keeps appending to does not grow while the take copies. After Stop it
// is gone, and so is the box's freezer cgroup.
func TestTakeFreezesEveryProcess(t *testing.T) {
	t.Parallel()
	e := setupAt(t, passable(t), `setsid sh -c 'echo $$ > loop.pid; while :; do date +%s%N >> f; sleep 0.01; done' & while :; do sleep 1; done`)
	e.write(t, "a.txt", "a")
	if err := e.b.Start(e.ctx, e.g); err != nil {
		t.Fatal(err)
	}
	var loop int
	t.Cleanup(func() {
		// Left running only by a pause that failed: its own group (setsid),
		// killed when its pid is still the box's loop.
		if cwd, _ := os.Readlink("/proc/" + strconv.Itoa(loop) + "/cwd"); loop > 0 && cwd == e.dir {
			_ = syscall.Kill(-loop, syscall.SIGKILL)
		}
	})
	size := func() int64 {
		fi, err := os.Stat(filepath.Join(e.dir, "f"))
		if err != nil {
			return -1
		}
		return fi.Size()
	}
	deadline := time.Now().Add(10 * time.Second)
	for loop == 0 || size() < 100 {
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(e.b.path(dirState, e.g.Ref+".log"))
			t.Fatalf("the box's setsid loop did not start; its log: %s", log)
		}
		time.Sleep(10 * time.Millisecond)
		if data, err := os.ReadFile(filepath.Join(e.dir, "loop.pid")); err == nil {
			loop, _ = strconv.Atoi(strings.TrimSpace(string(data)))
		}
	}
	var grew []string
	e.b.hooks.afterCopy = func(rel string) {
		before := size()
		time.Sleep(300 * time.Millisecond)
		if after := size(); after != before {
			grew = append(grew, rel+": "+strconv.FormatInt(before, 10)+" -> "+strconv.FormatInt(after, 10))
		}
	}
	taken, err := e.b.Snapshot(e.ctx, e.g, providers.SnapshotTake{Label: providers.Label{Box: e.g.Ref}}, nil)
	e.b.hooks.afterCopy = nil
	if len(grew) > 0 {
		t.Fatalf("the setsid process ran during the take: f grew while %s was copied", strings.Join(grew, "; "))
	}
	if err != nil {
		t.Fatalf("Snapshot: %v", err)
	}
	t.Logf("paused for %v", taken.Paused)
	// Thawed after: it runs again.
	before := size()
	deadline = time.Now().Add(5 * time.Second)
	for size() == before {
		if time.Now().After(deadline) {
			t.Fatal("the setsid process was not thawed after the take")
		}
		time.Sleep(10 * time.Millisecond)
	}
	// The box's processes by their host pids: inside bubblewrap, the pid
	// the loop wrote is its own namespace's, not the host's.
	pids := []int{loop}
	e.b.mu.Lock()
	if p := e.b.procs[e.g.Ref]; p != nil && p.cgroup != "" {
		pids = cgroupProcs(p.cgroup)
	}
	e.b.mu.Unlock()
	if len(pids) == 0 {
		t.Fatal("the running box has no process in its freezer cgroup")
	}
	if err := e.b.Stop(e.ctx, e.g); err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids {
		if data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil && !strings.Contains(string(data), ") Z ") {
			t.Errorf("a box process (the setsid loop's group) still runs after Stop: %s", data)
		}
	}
	if m, _ := filepath.Glob(filepath.Join(freezerRoot, e.g.Ref+"-*")); len(m) != 0 {
		t.Errorf("the box's freezer cgroup is left after Stop: %v", m)
	}
}
