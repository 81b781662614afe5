package snapshots_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/fork"
	"github.com/boxsnap/boxsnap/app/snapshots/restore"
	taking "github.com/boxsnap/boxsnap/app/snapshots/take"
	"github.com/boxsnap/boxsnap/providers"
)

// TestForkKeepsTemplateBounds: a box made from a box template with small
// limits (256 MiB, 64 open files, 40 processes), an environment and a user
// of its own is forked, and another box is reset to that template: each new
// box's process runs with the template's limits, environment and user, not
// the backend's defaults (4 GiB, 1,024, 512).
func TestForkKeepsTemplateBounds(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := resetEnv(t, map[string]string{"README": "fresh from devbox"})
	user := ""
	if os.Geteuid() == 0 {
		user = "nobody" // not the backend's own boxsnap-box
	}
	const cmd = `id -un > user; env > env; cat /proc/self/limits > limits; echo done > done; while :; do sleep 1; done`
	if err := e.Boxes.SaveTemplate(ctx, snapshots.Owner(), snapshots.BoxTemplate{Name: "small", Backend: "local", Kind: "linux",
		Source: "devbox", Command: cmd, User: user, Env: map[string]string{"GREETING": "small-hello"},
		Limits: providers.BoxLimits{MemoryBytes: 256 << 20, OpenFiles: 64, Processes: 40}}); err != nil {
		t.Fatal(err)
	}
	check := func(what, ref string) {
		t.Helper()
		g := providers.Guest{Backend: "local", Kind: "linux", Ref: ref}
		dir := e.Local.BoxDir(g)
		_ = e.Local.Stop(ctx, g)
		for _, f := range []string{"done", "user", "env", "limits"} {
			_ = os.Remove(filepath.Join(dir, f))
		}
		if err := e.Local.Start(ctx, g); err != nil {
			t.Fatalf("%s: start: %v", what, err)
		}
		defer func() { _ = e.Local.Stop(context.Background(), g) }()
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			if _, err := os.Stat(filepath.Join(dir, "done")); err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: its process wrote nothing in 30 s", what)
			}
		}
		read := func(name string) string {
			data, _ := os.ReadFile(filepath.Join(dir, name))
			return string(data)
		}
		if user != "" && strings.TrimSpace(read("user")) != user {
			t.Errorf("%s: its process runs as %q, want the template's %s", what, strings.TrimSpace(read("user")), user)
		}
		if !strings.Contains(read("env"), "GREETING=small-hello") {
			t.Errorf("%s: its environment is not the template's:\n%s", what, read("env"))
		}
		for line, want := range map[string]int64{"Max open files": 64, "Max processes": 40, "Max data size": 256 << 20} {
			found := ""
			for _, l := range strings.Split(read("limits"), "\n") {
				if f := strings.Fields(strings.TrimPrefix(l, line)); strings.HasPrefix(l, line) && len(f) >= 2 {
					found = f[0] + " " + f[1]
				}
			}
			if w := strconv.FormatInt(want, 10); found != w+" "+w {
				t.Errorf("%s: %s is %q, want the template's %s", what, line, found, w)
			}
		}
	}

	b, err := e.Boxes.AcquireBox(ctx, snapshots.Owner(), snapshots.BoxRequest{Name: "small-box", Template: "small"})
	if err != nil {
		t.Fatal(err)
	}
	check("the box", b.GuestRef)
	op, sn, err := e.Take.Take(ctx, snapshots.Owner(), taking.TakeRequest{Box: "small-box", Name: "as made"})
	if err != nil {
		t.Fatal(err)
	}
	if op = e.Wait(t, op); op.State != snapshots.OpDone {
		t.Fatalf("take ended %s: %s", op.State, coretest.Deref(op.Error))
	}
	op, err = e.Forks.Fork(ctx, snapshots.Owner(), fork.ForkRequest{Box: "small-box", Snapshot: sn.ID, Name: "small-fork"})
	if err != nil {
		t.Fatal(err)
	}
	if op = e.Wait(t, op); op.State != snapshots.OpDone {
		t.Fatalf("fork ended %s: %s", op.State, coretest.Deref(op.Error))
	}
	fork, err := e.Core.Box(ctx, snapshots.Owner(), "small-fork")
	if err != nil {
		t.Fatal(err)
	}
	check("the fork", fork.GuestRef)

	other, err := e.Boxes.AcquireBox(ctx, snapshots.Owner(), snapshots.BoxRequest{Name: "plain-box", Template: "devbox"})
	if err != nil {
		t.Fatal(err)
	}
	if op := reset(t, e, snapshots.Owner(), restore.ResetRequest{Box: "plain-box", Template: "small"}); op.State != snapshots.OpDone {
		t.Fatalf("reset ended %s: %s", op.State, coretest.Deref(op.Error))
	}
	check("a box reset to the template", other.GuestRef)
}

// TestARestorePastTheBoxsDiskBoundIsRefusedInWords: a box whose template's
// disk bound shrank (64 MiB, then 32 MiB at its reset) cannot be restored
// to a snapshot whose files hold 40 MiB: the restore fails in words that
// say why and what to do, before anything of the box is written, and the
// box's files are as they were.
func TestARestorePastTheBoxsDiskBoundIsRefusedInWords(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := resetEnv(t, map[string]string{"README": "fresh from devbox"})
	save := func(bound int64) {
		t.Helper()
		if err := e.Boxes.SaveTemplate(ctx, snapshots.Owner(), snapshots.BoxTemplate{Name: "sized", Backend: "local", Kind: "linux",
			Source: "devbox", Limits: providers.BoxLimits{DiskBytes: bound}}); err != nil {
			t.Fatal(err)
		}
	}
	save(64 << 20)
	b, err := e.Boxes.AcquireBox(ctx, snapshots.Owner(), snapshots.BoxRequest{Name: "sized-box", Template: "sized"})
	if err != nil {
		t.Fatal(err)
	}
	dir := e.Local.BoxDir(providers.Guest{Backend: "local", Kind: "linux", Ref: b.GuestRef})
	if err := os.WriteFile(filepath.Join(dir, "big"), []byte(strings.Repeat("x", 40<<20)), 0o644); err != nil {
		t.Fatal(err)
	}
	op, sn, err := e.Take.Take(ctx, snapshots.Owner(), taking.TakeRequest{Box: "sized-box", Name: "with the big file"})
	if err != nil {
		t.Fatal(err)
	}
	if op = e.Wait(t, op); op.State != snapshots.OpDone {
		t.Fatalf("take ended %s: %s", op.State, coretest.Deref(op.Error))
	}
	save(32 << 20)
	if op := reset(t, e, snapshots.Owner(), restore.ResetRequest{Box: "sized-box", Template: "sized"}); op.State != snapshots.OpDone {
		t.Fatalf("reset ended %s: %s", op.State, coretest.Deref(op.Error))
	}
	if err := os.WriteFile(filepath.Join(dir, "after"), []byte("written after the reset"), 0o644); err != nil {
		t.Fatal(err)
	}
	op, err = e.Restores.Restore(ctx, snapshots.Owner(), snapshots.RestoreRequest{Box: "sized-box", Snapshot: sn.ID, NoUndo: true})
	if err == nil {
		op = e.Wait(t, op)
	}
	words := ""
	if err != nil {
		words = err.Error()
	} else if op.State != snapshots.OpDone {
		words = coretest.Deref(op.Error)
	} else {
		t.Fatal("a restore past the box's disk bound was done")
	}
	t.Logf("the refused restore says: %s", words)
	for _, w := range []string{"The snapshot's files hold 40.0 MiB, more than the box's disk bound leaves for its files (",
		"nothing was written. Raise the disk bound in its template and reset the box, or choose a smaller snapshot."} {
		if !strings.Contains(words, w) {
			t.Fatalf("the refused restore says %q, not %q", words, w)
		}
	}
	fileIs(t, dir, "after", "written after the reset")
	fileIs(t, dir, "README", "fresh from devbox")
	if _, err := os.Stat(filepath.Join(dir, "big")); !os.IsNotExist(err) {
		t.Fatalf("the refused restore wrote the big file: %v", err)
	}
}
