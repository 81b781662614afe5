package local

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/local/process"
	"github.com/boxsnap/boxsnap/providers/local/store"
)

// TestTakeFreezesEveryProcess: a box process that leaves the box's
// process group and session (setsid) is still paused for a take: the file
// it keeps appending to does not grow while the take copies. After Stop it
// is gone, and so is the box's freezer cgroup.
//
// It runs on each cgroup version: cgroup v2 (cgroup.freeze, in a cgroup2
// hierarchy the test mounts itself) and the cgroup v1 freezer.
func TestTakeFreezesEveryProcess(t *testing.T) {
	t.Parallel()
	for _, v := range []string{"v2", "v1"} {
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			c := testCgroups(t, v)
			takeFreezesEveryProcess(t, c)
		})
	}
}

// testCgroups is the hierarchy of the given version ("v1", "v2") box
// cgroups are made in for a test: for v2, a cgroup2 hierarchy mounted in a
// temporary folder (a host whose controllers are all on v1 mounts it
// still, as freezing needs none); for v1, the host's freezer. The test
// skips where the kernel or the host has none, and fails so under CI.
func testCgroups(t *testing.T, version string) process.Cgroups {
	t.Helper()
	skip := func(format string, args ...any) {
		t.Helper()
		if os.Getenv("CI") == "true" {
			t.Fatalf(format, args...)
		}
		t.Skipf(format, args...)
	}
	mount := process.V1FreezerRoot
	if version == "v2" {
		mount = t.TempDir()
		if err := syscall.Mount("none", mount, "cgroup2", 0, ""); err != nil {
			skip("no cgroup2 hierarchy can be mounted here: %v", err)
		}
		t.Cleanup(func() {
			if err := syscall.Unmount(mount, syscall.MNT_DETACH); err != nil {
				t.Errorf("unmount the test's cgroup2 hierarchy: %v", err)
			}
		})
	}
	c, err := process.CgroupsAt(mount)
	if err != nil {
		skip("no cgroup %s freezer here: %v", version, err)
	}
	if c.V2 != (version == "v2") {
		t.Fatalf("%s is taken as v2=%v, not %s", mount, c.V2, version)
	}
	return c
}

func takeFreezesEveryProcess(t *testing.T, c process.Cgroups) {
	e := setupAt(t, passable(t), `setsid sh -c 'echo $$ > loop.pid; while :; do date +%s%N >> f; sleep 0.01; done' & while :; do sleep 1; done`)
	if !e.b.UseCgroups(c) {
		t.Fatal("the backend chose its cgroups before the test set them")
	}
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
			log, _ := os.ReadFile(e.b.Path(store.DirState, e.g.Ref+".log"))
			t.Fatalf("the box's setsid loop did not start; its log: %s", log)
		}
		time.Sleep(10 * time.Millisecond)
		if data, err := os.ReadFile(filepath.Join(e.dir, "loop.pid")); err == nil {
			loop, _ = strconv.Atoi(strings.TrimSpace(string(data)))
		}
	}
	var grew []string
	e.b.hooks.AfterCopy = func(rel string) {
		before := size()
		time.Sleep(300 * time.Millisecond)
		if after := size(); after != before {
			grew = append(grew, rel+": "+strconv.FormatInt(before, 10)+" -> "+strconv.FormatInt(after, 10))
		}
	}
	taken, err := e.b.Snapshot(e.ctx, e.g, providers.SnapshotTake{Label: providers.Label{Box: e.g.Ref}}, nil)
	e.b.hooks.AfterCopy = nil
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
	var cg string
	if p := e.b.procs[e.g.Ref]; p != nil && p.cgroup != "" {
		cg = p.cgroup
		pids = process.CgroupProcs(p.cgroup)
	}
	e.b.mu.Unlock()
	if filepath.Dir(cg) != c.Root {
		t.Fatalf("the box's cgroup is %q, not one in %s", cg, c.Root)
	}
	if len(pids) == 0 {
		t.Fatal("the running box has no process in its cgroup")
	}
	if err := e.b.Stop(e.ctx, e.g); err != nil {
		t.Fatal(err)
	}
	// A process leaves its cgroup early in its exit, so one may still be
	// ending (R, then X) just after: each must be dead within a bound.
	deadline = time.Now().Add(5 * time.Second)
	for _, pid := range pids {
		for {
			data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
			if err != nil || strings.Contains(string(data), ") Z ") || strings.Contains(string(data), ") X ") {
				break
			}
			if time.Now().After(deadline) {
				t.Errorf("a box process (the setsid loop's group) still runs after Stop: %s", data)
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	if m, _ := filepath.Glob(filepath.Join(c.Root, e.g.Ref+"-*")); len(m) != 0 {
		t.Errorf("the box's cgroup is left after Stop: %v", m)
	}
}

// TestStartRemovesEmptyCgroupsLeftByACrash: at start (the first
// RestartRunning), the empty cgroups of this backend's boxes that a crash
// left are removed, a released box's too; a cgroup with a live process in
// it is never removed, and neither is another backend's (another data
// folder's tag).
func TestStartRemovesEmptyCgroupsLeftByACrash(t *testing.T) {
	t.Parallel()
	for _, v := range []string{"v2", "v1"} {
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			c := testCgroups(t, v)
			e := setup(t)
			if !e.b.UseCgroups(c) {
				t.Fatal("the backend chose its cgroups before the test set them")
			}
			tag := e.b.CgroupTag()
			other := "deadbeef"
			if tag == other {
				other = "cafef00d"
			}
			left := filepath.Join(c.Root, e.g.Ref+"-"+tag+"-aaaaaaaa")
			released := filepath.Join(c.Root, "bxreleased"+store.RandomSuffix()[:6]+"-"+tag+"-bbbbbbbb")
			live := filepath.Join(c.Root, e.g.Ref+"-"+tag+"-cccccccc")
			others := filepath.Join(c.Root, e.g.Ref+"-"+other+"-dddddddd")
			for _, cg := range []string{left, released, live, others} {
				if err := os.Mkdir(cg, 0o755); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = os.Remove(cg) })
			}
			sleep := exec.Command("sleep", "60")
			if err := sleep.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				_ = sleep.Process.Kill()
				_ = sleep.Wait()
			})
			if err := os.WriteFile(filepath.Join(live, "cgroup.procs"), []byte(strconv.Itoa(sleep.Process.Pid)), 0); err != nil {
				t.Fatalf("move a process into a cgroup: %v", err)
			}
			if _, err := e.b.RestartRunning(e.ctx); err != nil {
				t.Fatal(err)
			}
			exists := func(p string) bool { _, err := os.Stat(p); return err == nil }
			if exists(left) {
				t.Errorf("the box's empty cgroup a crash left is still there: %s", left)
			}
			if exists(released) {
				t.Errorf("a released box's empty cgroup a crash left is still there: %s", released)
			}
			if !exists(live) {
				t.Errorf("a cgroup with a live process in it was removed: %s", live)
			} else if procs := process.CgroupProcs(live); len(procs) != 1 || procs[0] != sleep.Process.Pid {
				t.Errorf("the live cgroup holds %v, not the test's process %d", procs, sleep.Process.Pid)
			}
			if !exists(others) {
				t.Errorf("another data folder's cgroup was removed: %s", others)
			}
		})
	}
}
