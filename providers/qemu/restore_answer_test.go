package qemu_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/dbtest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	restoring "github.com/boxsnap/boxsnap/app/snapshots/restore"
	taking "github.com/boxsnap/boxsnap/app/snapshots/take"
	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/qemu"
)

// newCore starts a core on a fresh database with b as its "qemu-test"
// backend, beside the local one, its room setting at its highest (roomy).
func newCore(t *testing.T, b *qemu.Backend) *coretest.Env {
	t.Helper()
	env, err := coretest.Build(context.Background(), dbtest.New(t), coretest.Options{Install: "intest", LocalRoot: t.TempDir(), NoTrash: true,
		Extra: []snapshots.Backend{{ID: b.ID(), Kind: "qemu", Label: b.ID(), Snap: b, Boxes: b}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(env.Stop)
	roomy(t, env)
	return env
}

// restoreThroughTheCore restores box to snap through the core, with its
// undo, and answers its result and the box log's restored words.
func restoreThroughTheCore(t *testing.T, env *coretest.Env, box, snap string) (restoring.RestoreResult, string) {
	t.Helper()
	ctx := context.Background()
	op, err := env.Restores.Restore(ctx, snapshots.Owner(), snapshots.RestoreRequest{Box: box, Snapshot: snap})
	if err != nil {
		t.Fatalf("Restore: %v", err)
	}
	got := env.Wait(t, op)
	if got.State != snapshots.OpDone {
		t.Fatalf("the restore ended %s at %s: %s (%s)", got.State, got.Step, coretest.Deref(got.Error), coretest.Deref(got.Observed))
	}
	var res restoring.RestoreResult
	if err := json.Unmarshal(got.Result, &res); err != nil {
		t.Fatalf("the restore answered %s: %v", got.Result, err)
	}
	log, err := env.Boxes.BoxLog(ctx, snapshots.Owner(), box, 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range log {
		if ev.Kind == snapshots.EvRestored && ev.OperationID != nil && *ev.OperationID == got.ID {
			return res, ev.Words
		}
	}
	t.Fatalf("the box log has no restored event for %s", got.ID)
	return res, ""
}

// TestRestoreAnswerSaysWhatHappenedOnQEMU: a restore through the core
// answers what the QEMU backend did ("whether processes ended ... and the
// box's state"), and its box log says the same: a memory restore stops the
// guest (its dry run says the processes running then end) and brings it
// back running with the snapshot's processes, in the boot they ran in,
// none of them ended; a disk restore of the running guest ends its
// processes and starts it again.
func TestRestoreAnswerSaysWhatHappenedOnQEMU(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := newBackend(t)
	env := newCore(t, b)
	box, err := env.Boxes.AcquireBox(ctx, snapshots.Owner(), snapshots.BoxRequest{Name: "quiet-owl", Kind: qemu.KindLinux, Backend: b.ID(), Template: template})
	if err != nil {
		t.Fatalf("AcquireBox: %v", err)
	}
	g := providers.Guest{Backend: b.ID(), Kind: qemu.KindLinux, Ref: box.GuestRef, Generation: 1}
	boot(t, b, g)
	boot1 := bootID(t, b, g)

	take := func(name string, memory bool) string {
		t.Helper()
		op, sn, err := env.Take.Take(ctx, snapshots.Owner(), taking.TakeRequest{Box: box.Name, Name: name, Memory: memory})
		if err != nil {
			t.Fatalf("take %s: %v", name, err)
		}
		if got := env.Wait(t, op); got.State != snapshots.OpDone {
			t.Fatalf("take %s ended %s: %s", name, got.State, coretest.Deref(got.Error))
		}
		return sn.ID
	}
	disk := take("disk only", false)
	memory := take("with memory", true)

	// The dry run says what the dialog says: the processes running now end
	// (the guest stops first), its memory's come back.
	dry, err := env.Restores.RestoreDryRun(ctx, snapshots.Owner(), snapshots.RestoreRequest{Box: box.Name, Snapshot: memory})
	if err != nil {
		t.Fatal(err)
	}
	if w := restoring.DryRunWords(dry); !strings.Contains(w, "it comes back running as it was then, with the credentials its apps held then. Every process running in it now ends.") {
		t.Errorf("the dry run of the memory restore says %q, want that it comes back running and the processes running now end", w)
	}
	if w := restoring.DryRunWords(dry); !strings.Contains(w, "would stop it, take an undo of it stopped, then put back") {
		t.Errorf("the dry run of the memory restore says %q, want that it stops the guest before it takes the undo, as the restore does", w)
	}
	res, words := restoreThroughTheCore(t, env, box.Name, memory)
	if res.Processes || res.BoxState != restoring.BoxRunning {
		t.Errorf("the memory restore answered processesEnded %v and boxState %q, want false and %q", res.Processes, res.BoxState, restoring.BoxRunning)
	}
	if !strings.Contains(words, "its processes with it") || strings.Contains(words, "ended") {
		t.Errorf("the box log says of the memory restore %q, want that it runs on with its processes", words)
	}
	if id := bootID(t, b, g); id != boot1 {
		t.Fatalf("after the memory restore the guest booted again (boot %s, was %s)", id, boot1)
	}

	res, words = restoreThroughTheCore(t, env, box.Name, disk)
	if !res.Processes || res.BoxState != restoring.BoxRunning {
		t.Errorf("the disk restore answered processesEnded %v and boxState %q, want true and %q", res.Processes, res.BoxState, restoring.BoxRunning)
	}
	if !strings.Contains(words, "every process in it ended; it is running") {
		t.Errorf("the box log says of the disk restore %q, want that every process ended and it runs", words)
	}
}
