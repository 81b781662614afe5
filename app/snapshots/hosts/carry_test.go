package hosts_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	taking "github.com/boxsnap/boxsnap/app/snapshots/take"
	"github.com/boxsnap/boxsnap/providers"
)

// runsCmd writes what its process runs as and under, then waits.
const runsCmd = `id -un > user; env > env; cat /proc/self/limits > limits; echo done > done; while :; do sleep 1; done`

// ranAs starts box ref's process afresh on e's host and answers the files
// runsCmd wrote: its user, environment and limits.
func ranAs(t *testing.T, e *coretest.Env, ref string) map[string]string {
	t.Helper()
	ctx := context.Background()
	g := providers.Guest{Backend: "local", Kind: "linux", Ref: ref}
	dir := e.Local.BoxDir(g)
	_ = e.Local.Stop(ctx, g)
	for _, f := range []string{"done", "user", "env", "limits"} {
		_ = os.Remove(filepath.Join(dir, f))
	}
	if err := e.Local.Start(ctx, g); err != nil {
		t.Fatalf("start: %v", err)
	}
	t.Cleanup(func() { _ = e.Local.Stop(context.Background(), g) })
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(dir, "done")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("box %s's process wrote nothing in 30 s: it does not run the box's command", ref)
		}
	}
	out := map[string]string{}
	for _, f := range []string{"user", "env", "limits"} {
		data, _ := os.ReadFile(filepath.Join(dir, f))
		out[f] = string(data)
	}
	return out
}

// limitOf reads a soft limit from /proc/self/limits' text.
func limitOf(limits, line string) string {
	for _, l := range strings.Split(limits, "\n") {
		if f := strings.Fields(strings.TrimPrefix(l, line)); strings.HasPrefix(l, line) && len(f) >= 2 {
			return f[0]
		}
	}
	return ""
}

// TestMovedBoxRunsAsItRan: a box made from a box template with a command,
// a user, an environment and small limits (256 MiB, 64 open files, 40
// processes, a 64 MiB disk) is moved to another host after its template's
// limits changed: on the new host it runs the same command, as the same
// user, with its template's environment, under the limits it ran with when
// its snapshot was taken, on a disk of its own bound.
func TestMovedBoxRunsAsItRan(t *testing.T) {
	ctx := context.Background()
	a, b := twoHosts(t, coretest.Options{})
	user := ""
	if os.Geteuid() == 0 {
		user = "nobody" // not the backend's own boxsnap-box
	}
	tmpl := snapshots.BoxTemplate{Name: "small", Backend: "local", Kind: "linux", Command: runsCmd, User: user,
		Env: map[string]string{"GREETING": "small-hello"}, Limits: providers.BoxLimits{MemoryBytes: 256 << 20, OpenFiles: 64, Processes: 40, DiskBytes: 64 << 20}}
	if err := a.Boxes.SaveTemplate(ctx, snapshots.Owner(), tmpl); err != nil {
		t.Fatal(err)
	}
	box, err := a.Boxes.AcquireBox(ctx, snapshots.Owner(), snapshots.BoxRequest{Name: "small-box", Template: "small"})
	if err != nil {
		t.Fatal(err)
	}
	ranAs(t, a, box.GuestRef)
	op, _, err := a.Take.Take(ctx, snapshots.Owner(), taking.TakeRequest{Box: "small-box", Name: "as it ran"})
	if err != nil {
		t.Fatal(err)
	}
	if op = a.Wait(t, op); op.State != snapshots.OpDone {
		t.Fatalf("take: %s %s", op.State, coretest.Deref(op.Error))
	}
	_ = a.Local.Stop(ctx, providers.Guest{Backend: "local", Kind: "linux", Ref: box.GuestRef})
	// The template changes after the take: the box carries what it ran with.
	tmpl.Limits = providers.BoxLimits{MemoryBytes: 512 << 20, OpenFiles: 128, Processes: 80}
	if err := a.Boxes.SaveTemplate(ctx, snapshots.Owner(), tmpl); err != nil {
		t.Fatal(err)
	}
	op, err = b.Hosts.Move(ctx, snapshots.Owner(), "small-box", "host-b")
	if err != nil {
		t.Fatalf("move: %v", err)
	}
	if op = b.Wait(t, op); op.State != snapshots.OpDone {
		t.Fatalf("move's restore: %s %s", op.State, coretest.Deref(op.Error))
	}
	got := ranAs(t, b, box.GuestRef)
	if user != "" && strings.TrimSpace(got["user"]) != user {
		t.Errorf("on host-b its process runs as %q, want %s", strings.TrimSpace(got["user"]), user)
	}
	if !strings.Contains(got["env"], "GREETING=small-hello") {
		t.Errorf("on host-b its environment is not its template's:\n%s", got["env"])
	}
	for line, want := range map[string]int64{"Max open files": 64, "Max processes": 40, "Max data size": 256 << 20} {
		if l := limitOf(got["limits"], line); l != strconv.FormatInt(want, 10) {
			t.Errorf("on host-b %s is %q, want %d, what it ran with on host-a", line, l, want)
		}
	}
	var fs unix.Statfs_t
	if err := unix.Statfs(b.Local.BoxDir(providers.Guest{Ref: box.GuestRef}), &fs); err != nil {
		t.Fatal(err)
	}
	if size := int64(fs.Blocks) * fs.Bsize; size > 64<<20 {
		t.Errorf("on host-b its disk holds %d bytes, want at most its 64 MiB bound", size)
	}
}
