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
	// The loop's name ($0) is a word of its own, so the test finds its host
	// pid in /proc whatever pid namespace the box runs in.
	name := "setsid-loop-" + randomSuffix()[:10]
	e := setupAt(t, passable(t), `setsid sh -c 'while :; do date +%s%N >> f; sleep 0.01; done' `+name+` & while :; do sleep 1; done`)
	e.write(t, "a.txt", "a")
	if err := e.b.Start(e.ctx, e.g); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Left running only by a pause that failed.
		for _, pid := range pidsNamed(name) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
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
	for len(pidsNamed(name)) == 0 || size() < 100 {
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(e.b.path(dirState, e.g.Ref+".log"))
			t.Fatalf("the box's setsid loop did not start; its log: %s", log)
		}
		time.Sleep(10 * time.Millisecond)
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
	if err := e.b.Stop(e.ctx, e.g); err != nil {
		t.Fatal(err)
	}
	if pids := pidsNamed(name); len(pids) != 0 {
		t.Errorf("the setsid process still runs after Stop: pids %v", pids)
	}
	if m, _ := filepath.Glob(filepath.Join(freezerRoot, e.g.Ref+"-*")); len(m) != 0 {
		t.Errorf("the box's freezer cgroup is left after Stop: %v", m)
	}
}

// pidsNamed lists the live processes (not zombies) whose command line holds
// word.
func pidsNamed(word string) []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, d := range ents {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		cmd, err := os.ReadFile("/proc/" + d.Name() + "/cmdline")
		if err != nil || !strings.Contains(string(cmd), word) {
			continue
		}
		if st, err := os.ReadFile("/proc/" + d.Name() + "/stat"); err == nil && strings.Contains(string(st), ") Z ") {
			continue
		}
		out = append(out, pid)
	}
	return out
}
