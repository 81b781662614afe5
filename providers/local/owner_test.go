package local

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/boxsnap/boxsnap/providers"
)

// ownerBackend is a backend on root that owns the box processes it starts,
// as a worker does.
func ownerBackend(t *testing.T, root, owner string) *Backend {
	t.Helper()
	b, err := New(Config{Root: root, Install: "in-test", NoSync: true, StopTimeout: 2 * time.Second})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	unmountAtEnd(t, b)
	b.SetOwner(owner)
	return b
}

// commandPids are the processes whose command line is exactly want and whose
// working folder is dir (by device and inode, which holds inside
// bubblewrap's mount namespace too): the box's processes of its command, as
// the soak counts them.
func commandPids(dir, want string) []int {
	var at syscall.Stat_t
	if syscall.Stat(dir, &at) != nil {
		return nil
	}
	var out []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cl, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || strings.TrimRight(strings.ReplaceAll(string(cl), "\x00", " "), " ") != want {
			continue
		}
		var st syscall.Stat_t
		if syscall.Stat(filepath.Join("/proc", e.Name(), "cwd"), &st) == nil && st.Dev == at.Dev && st.Ino == at.Ino {
			out = append(out, pid)
		}
	}
	return out
}

// mostPids watches the box's processes of want for a second, as long as a
// start takes to run the command, and answers the most it saw at once.
func mostPids(dir, want string) []int {
	var most []int
	for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if got := commandPids(dir, want); len(got) > len(most) {
			most = got
		}
	}
	return most
}

// smallDisk mounts a tmpfs of 4 MiB as a data folder, as the soak's full
// disk is, and answers it and the function that fills it to the last byte.
func smallDisk(t *testing.T) (string, func() (free func())) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a small disk needs root")
	}
	root := passable(t)
	if err := unix.Mount("tmpfs", root, "tmpfs", 0, "size=4m,mode=0711"); err != nil {
		t.Skipf("no tmpfs here: %v", err)
	}
	t.Cleanup(func() { _ = unix.Unmount(root, unix.MNT_DETACH) })
	fill := func() func() {
		p := filepath.Join(root, "filler")
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 64<<10)
		for {
			if _, err := f.Write(buf); err != nil {
				if !errors.Is(err, syscall.ENOSPC) {
					t.Fatal(err)
				}
				break
			}
		}
		for {
			if _, err := f.Write(buf[:1]); err != nil {
				break
			}
		}
		f.Close()
		return func() { _ = os.Remove(p) }
	}
	return root, fill
}

func stopAll(bs ...*Backend) func(g providers.Guest) {
	return func(g providers.Guest) {
		for _, b := range bs {
			_ = b.Stop(context.Background(), g)
		}
	}
}

// TestATakeOverLeavesABoxALiveOwnerTookMeanwhile: ownership of a box's
// process moves only when its owner's presence is gone. Two workers judge
// the same dead owner gone; the first takes the box over; the second, which
// asked before the first took it, finds the box under a live owner with its
// process alive, and leaves it: the process it finds alive is not ended,
// and it starts none.
func TestATakeOverLeavesABoxALiveOwnerTookMeanwhile(t *testing.T) {
	const command = "sleep 86391"
	root := passable(t)
	dead, first, second := ownerBackend(t, root, "dead"), ownerBackend(t, root, "first"), ownerBackend(t, root, "second")
	g, err := dead.Acquire(t.Context(), providers.BoxSpec{Box: providers.BoxIdentity{ID: "bxtakenmeanwhile", Kind: "linux"}, Command: command, NoNetwork: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stopAll(first, second, dead)(g) })
	if err := dead.Start(t.Context(), g); err != nil {
		t.Fatal(err)
	}
	dir := dead.BoxDir(g)
	if got := mostPids(dir, command); len(got) != 1 {
		t.Fatalf("the box's first start runs %d processes: %v", len(got), got)
	}
	onlyDeadIsGone := func(_ context.Context, owner string) (bool, error) { return owner != "dead", nil }
	var firstTook []string
	asked := func(ctx context.Context, owner string) (bool, error) {
		// While the second worker asks after the dead owner, the first
		// takes the box over.
		if owner == "dead" && firstTook == nil {
			took, err := first.TakeOver(ctx, onlyDeadIsGone)
			if err != nil {
				t.Errorf("the first worker's take-over: %v", err)
			}
			firstTook = append(took, "")[:len(took)]
		}
		return onlyDeadIsGone(ctx, owner)
	}
	if _, err := second.TakeOver(t.Context(), asked); err != nil {
		t.Fatalf("the second worker's take-over: %v", err)
	}
	if len(firstTook) != 1 {
		t.Fatalf("the first worker took over %v, not the box", firstTook)
	}
	first.mu.Lock()
	p := first.procs[g.Ref]
	first.mu.Unlock()
	if p == nil || p.exited() {
		t.Fatal("the process the first worker started for the box was ended by the second, while its owner lives")
	}
	if owner, _ := first.BoxOwner(g.Ref); owner != "first" {
		t.Fatalf("the box's owner is %q, not the live worker that took it over (first)", owner)
	}
	if got := mostPids(dir, command); len(got) != 1 {
		t.Fatalf("each box runs at most one process: %d of %q: %v", len(got), command, got)
	}
}

// TestAStartTheDiskCannotRecordEndsItsProcess: a box's process that its
// state file does not record would run unseen by the other workers, and one
// of them would start another. On a full disk the start's record cannot be
// written: Start answers the error, and no process of the box is left; once
// there is room, another worker's start runs the box's one process.
func TestAStartTheDiskCannotRecordEndsItsProcess(t *testing.T) {
	const command = "sleep 86392"
	root, fill := smallDisk(t)
	one, other := ownerBackend(t, root, "one"), ownerBackend(t, root, "other")
	g, err := one.Acquire(t.Context(), providers.BoxSpec{Box: providers.BoxIdentity{ID: "bxfullstart", Kind: "linux"}, Command: command, NoNetwork: true,
		Limits: providers.BoxLimits{DiskBytes: 8 << 20}}) // an image that fits the 4 MiB disk
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stopAll(one, other)(g) })
	dir := one.BoxDir(g)
	free := fill()
	if err := one.Start(t.Context(), g); err == nil {
		t.Fatal("Start on a full disk, whose state file cannot record the process, answered no error")
	}
	if got := mostPids(dir, command); len(got) != 0 {
		t.Fatalf("a start the state file does not record left %d processes of the box: %v", len(got), got)
	}
	free()
	if err := other.Start(t.Context(), g); err != nil {
		t.Fatal(err)
	}
	if got := mostPids(dir, command); len(got) != 1 {
		t.Fatalf("each box runs at most one process: %d of %q: %v", len(got), command, got)
	}
}

// TestATakeOverTheDiskCannotRecordEndsItsProcess: a take-over ends the gone
// owner's process and starts the box's here; on a full disk its record
// cannot be written, and the process it started is ended too, so that the
// next take-over, once there is room, runs the box's one process.
func TestATakeOverTheDiskCannotRecordEndsItsProcess(t *testing.T) {
	const command = "sleep 86393"
	root, fill := smallDisk(t)
	dead, taker, next := ownerBackend(t, root, "dead"), ownerBackend(t, root, "taker"), ownerBackend(t, root, "next")
	g, err := dead.Acquire(t.Context(), providers.BoxSpec{Box: providers.BoxIdentity{ID: "bxfulltakeover", Kind: "linux"}, Command: command, NoNetwork: true,
		Limits: providers.BoxLimits{DiskBytes: 8 << 20}}) // an image that fits the 4 MiB disk
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stopAll(next, taker, dead)(g) })
	if err := dead.Start(t.Context(), g); err != nil {
		t.Fatal(err)
	}
	dir := dead.BoxDir(g)
	if got := mostPids(dir, command); len(got) != 1 {
		t.Fatalf("the box's first start runs %d processes: %v", len(got), got)
	}
	gone := func(_ context.Context, owner string) (bool, error) { return owner != "dead" && owner != "taker", nil }
	free := fill()
	if _, err := taker.TakeOver(t.Context(), gone); err == nil {
		t.Fatal("a take-over on a full disk, whose state file cannot record the process, answered no error")
	}
	if got := mostPids(dir, command); len(got) != 0 {
		t.Fatalf("a take-over the state file does not record left %d processes of the box: %v", len(got), got)
	}
	free()
	took, err := next.TakeOver(t.Context(), gone)
	if err != nil || len(took) != 1 {
		t.Fatalf("the next take-over took %v: %v", took, err)
	}
	if got := mostPids(dir, command); len(got) != 1 {
		t.Fatalf("each box runs at most one process: %d of %q: %v", len(got), command, got)
	}
}

// dyingOwnerEnv names, in a child test process, the data folder and box of
// a start whose owner dies mid-start (TestOwnerDiesMidStart).
const dyingOwnerEnv = "BOXSNAP_TEST_DYING_OWNER"

// TestOwnerDiesMidStart is not a test of its own: it is the owner that
// TestOneProcessPerBoxAcrossAKilledOwner runs in a child process and kills.
// It starts the box and, once its process runs and before the state file
// records that process, is killed with SIGKILL, as the soak kills a worker.
func TestOwnerDiesMidStart(t *testing.T) {
	at := os.Getenv(dyingOwnerEnv)
	if at == "" {
		t.Skip("the owner TestOneProcessPerBoxAcrossAKilledOwner runs and kills")
	}
	f := strings.Split(at, ":")
	if len(f) != 3 {
		t.Fatalf("%s=%q: not root:box:how", dyingOwnerEnv, at)
	}
	root, box, how := f[0], f[1], f[2]
	b := ownerBackend(t, root, "dead")
	if how == "bare" {
		b.BwrapOnce.Do(func() {}) // as on a host without bubblewrap
	}
	b.hooks.spawned = func() {
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {}
	}
	err := b.Start(context.Background(), b.guestOf(box, "linux"))
	t.Fatalf("the owner's start returned (%v): it was to be killed mid-start", err)
}

// TestOneProcessPerBoxAcrossAKilledOwner: each box runs at most one process,
// across a worker killed with SIGKILL while it starts one (a restore's start
// step, as the soak kills a worker amid the agents' restores). The owner, a
// real child process, dies once the box's process runs and before its state
// file records it. The box's process outlives it: without bubblewrap always
// (a process of its own session), inside bubblewrap when the kill comes
// before bwrap arms --die-with-parent (its sandbox's init arms it later
// still). Another worker then starts the box, as the restore resumed there
// does, and takes over the boxes of the dead owner: one process of the box
// runs, not the orphan and a second.
func TestOneProcessPerBoxAcrossAKilledOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the box's freezer cgroup needs root")
	}
	for i, how := range []string{"bare", "sandboxed"} {
		t.Run(how, func(t *testing.T) {
			if _, err := exec.LookPath("bwrap"); err != nil && how == "sandboxed" {
				t.Skip("no bubblewrap here")
			}
			command := "sleep 8639" + strconv.Itoa(5+i)
			root := passable(t)
			other := ownerBackend(t, root, "other")
			g, err := other.Acquire(t.Context(), providers.BoxSpec{Box: providers.BoxIdentity{ID: "bxkilledowner", Kind: "linux"}, Command: command, NoNetwork: true})
			if err != nil {
				t.Fatal(err)
			}
			dir := other.BoxDir(g)
			t.Cleanup(func() {
				stopAll(other)(g)
				for _, pid := range commandPids(dir, command) {
					_ = syscall.Kill(pid, syscall.SIGKILL) // an orphan no record names
				}
			})
			owner := exec.Command(os.Args[0], "-test.run=^TestOwnerDiesMidStart$", "-test.count=1", "-test.v")
			owner.Env = append(os.Environ(), dyingOwnerEnv+"="+root+":"+g.Ref+":"+how)
			out, err := owner.CombinedOutput()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
				t.Fatalf("the owner was not killed mid-start (%v):\n%s", err, out)
			}
			// The restore's start step, resumed in another worker.
			if err := other.Start(t.Context(), g); err != nil {
				t.Fatalf("another worker's start: %v", err)
			}
			// Its presence is gone: the live worker takes its boxes over.
			if _, err := other.TakeOver(t.Context(), func(_ context.Context, o string) (bool, error) { return o != "dead", nil }); err != nil {
				t.Fatalf("the take-over of the dead owner's boxes: %v", err)
			}
			if got := mostPids(dir, command); len(got) != 1 {
				t.Fatalf("each box runs at most one process: %d of %q after its owner was killed mid-start: %v", len(got), command, got)
			}
		})
	}
}
