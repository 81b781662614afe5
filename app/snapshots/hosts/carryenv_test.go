package hosts_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	forks "github.com/boxsnap/boxsnap/app/snapshots/fork"
	"github.com/boxsnap/boxsnap/app/snapshots/restore"
	"github.com/boxsnap/boxsnap/providers"
)

// lockedBuffer is a log's text, written by many goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestMovedBoxCarriesItsRecordedRun: a box made from a box template with
// an environment holding a secret, and a fork of it, are moved to another
// host after the template's environment changed: on the new host each
// runs with the environment the box was made with, as the database
// recorded it, not the template's as it is now; and the secret appears in
// no log line, operation or box log of either host.
func TestMovedBoxCarriesItsRecordedRun(t *testing.T) {
	ctx := context.Background()
	logs := &lockedBuffer{}
	a, b := twoHosts(t, coretest.Options{Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	const secret = "tok-9f3c1e-never-shown"
	tmpl := keyedBox(t, a, secret)
	sn := a.TakeReady(t, snapshots.Owner(), "keyed-box", "as made")
	fop, err := a.Forks.Fork(ctx, snapshots.Owner(), forks.ForkRequest{Box: "keyed-box", Snapshot: sn.ID, Name: "keyed-fork"})
	if err != nil {
		t.Fatal(err)
	}
	if fop = a.Wait(t, fop); fop.State != snapshots.OpDone {
		t.Fatalf("fork: %s %s", fop.State, coretest.Deref(fop.Error))
	}
	a.TakeReady(t, snapshots.Owner(), "keyed-fork", "the fork as made")
	for _, name := range []string{"keyed-box", "keyed-fork"} {
		bx, err := a.Core.Box(ctx, snapshots.Owner(), name)
		if err != nil {
			t.Fatal(err)
		}
		_ = a.Local.Stop(ctx, providers.Guest{Backend: "local", Kind: "linux", Ref: bx.GuestRef})
	}
	// The template changes after the boxes were made: each carries its own.
	tmpl.Env = map[string]string{"GREETING": "changed"}
	if err := a.Boxes.SaveTemplate(ctx, snapshots.Owner(), tmpl); err != nil {
		t.Fatal(err)
	}
	var seen []string
	for _, name := range []string{"keyed-box", "keyed-fork"} {
		op, err := b.Hosts.Move(ctx, snapshots.Owner(), name, "host-b")
		if err != nil {
			t.Fatalf("move %s: %v", name, err)
		}
		op = b.Wait(t, op)
		if op.State != snapshots.OpDone {
			t.Fatalf("%s's move: %s %s", name, op.State, coretest.Deref(op.Error))
		}
		bx, err := b.Core.Box(ctx, snapshots.Owner(), name)
		if err != nil {
			t.Fatal(err)
		}
		env := ranAs(t, b, bx.GuestRef)["env"]
		if !strings.Contains(env, "GREETING=as-made\n") || !strings.Contains(env, "API_TOKEN="+secret+"\n") {
			t.Errorf("on host-b %s's environment is not the one it was made with:\n%s", name, env)
		}
		events, err := b.Boxes.BoxLog(ctx, snapshots.Owner(), name, 50)
		if err != nil {
			t.Fatal(err)
		}
		opJSON, _ := json.Marshal(op)
		evJSON, _ := json.Marshal(events)
		seen = append(seen, string(opJSON), string(evJSON))
	}
	noSecret(t, secret, append(seen, logs.String())...)
}

// TestMovedBoxCarriesTheRunItWasResetTo: a box reset after its template's
// environment changed runs with the new environment, and a move onto
// another host then carries that one, not the one it was made with.
func TestMovedBoxCarriesTheRunItWasResetTo(t *testing.T) {
	ctx := context.Background()
	a, b := twoHosts(t, coretest.Options{})
	tmpl := snapshots.BoxTemplate{Name: "keyed", Backend: "local", Kind: "linux", Command: runsCmd,
		Env: map[string]string{"GREETING": "as-made"}}
	if err := a.Boxes.SaveTemplate(ctx, snapshots.Owner(), tmpl); err != nil {
		t.Fatal(err)
	}
	box, err := a.Boxes.AcquireBox(ctx, snapshots.Owner(), snapshots.BoxRequest{Name: "reset-box", Template: "keyed"})
	if err != nil {
		t.Fatal(err)
	}
	tmpl.Env = map[string]string{"GREETING": "as-reset"}
	if err := a.Boxes.SaveTemplate(ctx, snapshots.Owner(), tmpl); err != nil {
		t.Fatal(err)
	}
	rop, err := a.Restores.Resets().Reset(ctx, snapshots.Owner(), restore.ResetRequest{Box: "reset-box", Force: true})
	if err != nil {
		t.Fatal(err)
	}
	if rop = a.Wait(t, rop); rop.State != snapshots.OpDone {
		t.Fatalf("reset: %s %s", rop.State, coretest.Deref(rop.Error))
	}
	if env := ranAs(t, a, box.GuestRef)["env"]; !strings.Contains(env, "GREETING=as-reset\n") {
		t.Fatalf("on host-a after the reset:\n%s", env)
	}
	a.TakeReady(t, snapshots.Owner(), "reset-box", "as reset")
	_ = a.Local.Stop(ctx, providers.Guest{Backend: "local", Kind: "linux", Ref: box.GuestRef})
	// The template changes again: the box carries what it was reset to.
	tmpl.Env = map[string]string{"GREETING": "changed-after"}
	if err := a.Boxes.SaveTemplate(ctx, snapshots.Owner(), tmpl); err != nil {
		t.Fatal(err)
	}
	op, err := b.Hosts.Move(ctx, snapshots.Owner(), "reset-box", "host-b")
	if err != nil {
		t.Fatalf("move: %v", err)
	}
	if op = b.Wait(t, op); op.State != snapshots.OpDone {
		t.Fatalf("move's restore: %s %s", op.State, coretest.Deref(op.Error))
	}
	if env := ranAs(t, b, box.GuestRef)["env"]; !strings.Contains(env, "GREETING=as-reset\n") {
		t.Errorf("on host-b the moved box's environment is not the one it was reset to:\n%s", env)
	}
}

// TestForkOnAnotherHostCarriesItsSourcesEnvironment: a box made on host-a
// from a box template whose environment holds a secret is forked on
// host-b from its snapshot, after the template's environment changed: the
// fork's process on host-b runs with the environment its source box was
// made with, as the database recorded it (the move's carriedRun), not the
// template's as it is now nor none; and the secret appears in no log
// line, operation or box log. On the old code the fork on host-b ran with
// no environment: its source's state is on host-a alone.
func TestForkOnAnotherHostCarriesItsSourcesEnvironment(t *testing.T) {
	ctx := context.Background()
	logs := &lockedBuffer{}
	a, b := twoHosts(t, coretest.Options{Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	const secret = "tok-4b7d2a-never-shown"
	tmpl := keyedBox(t, a, secret)
	sn := a.TakeReady(t, snapshots.Owner(), "keyed-box", "as made")
	tmpl.Env = map[string]string{"GREETING": "changed"}
	if err := a.Boxes.SaveTemplate(ctx, snapshots.Owner(), tmpl); err != nil {
		t.Fatal(err)
	}
	op, err := b.Forks.Fork(ctx, snapshots.Owner(), forks.ForkRequest{Box: "keyed-box", Snapshot: sn.ID, Name: "keyed-on-b"})
	if err != nil {
		t.Fatal(err)
	}
	if op = b.Wait(t, op); op.State != snapshots.OpDone {
		t.Fatalf("the fork on host-b: %s %s", op.State, coretest.Deref(op.Error))
	}
	fork, err := b.Core.Box(ctx, snapshots.Owner(), "keyed-on-b")
	if err != nil {
		t.Fatal(err)
	}
	env := ranAs(t, b, fork.GuestRef)["env"]
	if !strings.Contains(env, "GREETING=as-made\n") || !strings.Contains(env, "API_TOKEN="+secret+"\n") {
		t.Errorf("on host-b the fork's environment is not its source box's:\n%s", env)
	}
	events, err := b.Boxes.BoxLog(ctx, snapshots.Owner(), "keyed-on-b", 50)
	if err != nil {
		t.Fatal(err)
	}
	srcEvents, err := a.Boxes.BoxLog(ctx, snapshots.Owner(), "keyed-box", 50)
	if err != nil {
		t.Fatal(err)
	}
	opJSON, _ := json.Marshal(op)
	evJSON, _ := json.Marshal(append(events, srcEvents...))
	noSecret(t, secret, string(opJSON), string(evJSON), logs.String())
}

// keyedBox makes on host a the box keyed-box from the template keyed,
// whose environment holds secret, and sees its process run; it gives the
// template, for the test to change after.
func keyedBox(t *testing.T, a *coretest.Env, secret string) snapshots.BoxTemplate {
	t.Helper()
	ctx := context.Background()
	tmpl := snapshots.BoxTemplate{Name: "keyed", Backend: "local", Kind: "linux", Command: runsCmd,
		Env: map[string]string{"GREETING": "as-made", "API_TOKEN": secret}}
	if err := a.Boxes.SaveTemplate(ctx, snapshots.Owner(), tmpl); err != nil {
		t.Fatal(err)
	}
	box, err := a.Boxes.AcquireBox(ctx, snapshots.Owner(), snapshots.BoxRequest{Name: "keyed-box", Template: "keyed"})
	if err != nil {
		t.Fatal(err)
	}
	ranAs(t, a, box.GuestRef)
	return tmpl
}

// noSecret fails the test if any of seen shows secret.
func noSecret(t *testing.T, secret string, seen ...string) {
	t.Helper()
	for _, s := range seen {
		if strings.Contains(s, secret) {
			t.Fatalf("the box's secret is shown: %.2000s", s)
		}
	}
}
