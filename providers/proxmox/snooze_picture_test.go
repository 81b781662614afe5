package proxmox_test

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/providers/proxmox"
)

// drawnScreen is the worker process's picture taker: it draws a screen (a
// box on the simulator has none to capture) and notes each capture in file.
type drawnScreen struct{ file string }

func (d drawnScreen) Capture(_ context.Context, b *snapshots.Box) ([]byte, int, int, error) {
	f, err := os.OpenFile(d.file, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, 0, 0, err
	}
	defer f.Close()
	if _, err := fmt.Fprintln(f, "captured", b.Name); err != nil {
		return nil, 0, 0, err
	}
	img := image.NewRGBA(image.Rect(0, 0, 48, 30))
	for x := range 48 {
		img.Set(x, x%30, color.RGBA{B: 200, A: 255})
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: snapshots.PictureQuality}); err != nil {
		return nil, 0, 0, err
	}
	return buf.Bytes(), 48, 30, nil
}

// TestUndoPictureOutlastsTheSnoozes: "An undo's picture is from before the
// stop", on Proxmox, where the restore's job snoozes on the stop's task and
// on the undo's between the capture and the undo. The worker is killed while
// the job snoozes on the stop. The undo has the picture captured as the
// restore began, captured once, and nothing is left held for it.
func TestUndoPictureOutlastsTheSnoozes(t *testing.T) {
	t.Parallel()
	screens := filepath.Join(t.TempDir(), "screens")
	s := newSnoozeEnv(t, nil, false)
	s.w.kill()
	s.restartWith(t, workerScreens+"="+screens)
	ctx := context.Background()
	b, err := s.env.Boxes.AcquireBox(ctx, snapshots.Owner(), snapshots.BoxRequest{Name: "amber-fox", Kind: proxmox.KindLXC,
		Backend: "pve-lab", Adopt: itoa(lxcThin), HasScreen: true, ScreenURL: "http://127.0.0.1:1/"})
	must(t, err)
	target := takeDone(t, s.env, snapshots.Owner(), b.Name, "target")
	must(t, os.Remove(screens)) // the take's own picture
	// Each task runs until the test has seen the job snooze on it.
	s.e.sim.StallNextTask("vzstop", lxcThin)
	s.e.sim.StallNextTask("vzsnapshot", lxcThin)

	op, err := s.env.Restores.Restore(ctx, snapshots.Owner(), snapshots.RestoreRequest{Box: b.Name, Snapshot: target.ID})
	must(t, err)
	stop := s.snoozedAt(t, op.ID, "stop", "vzstop")
	s.w.kill()
	s.restartWith(t, workerScreens+"="+screens)
	s.end(t, stop)
	s.end(t, s.snoozedAt(t, op.ID, "undo", "vzsnapshot"))
	got := s.env.Wait(t, op)
	if got.State != snapshots.OpDone || got.UndoID == nil {
		t.Fatalf("the restore ended %s: %q", got.State, deref(got.Error))
	}
	undo, _, err := s.env.Core.Snapshot(ctx, snapshots.Owner(), *got.UndoID)
	must(t, err)
	if undo.Picture != "taken" {
		t.Fatalf("the undo's picture is %q, want taken", undo.Picture)
	}
	p, err := s.env.Pictures.Get(ctx, snapshots.Owner(), undo.ID)
	if err != nil {
		t.Fatalf("the undo has no picture: %v", err)
	}
	if _, err := jpeg.Decode(bytes.NewReader(p.JPEG)); err != nil || p.Width != 48 || p.Height != 30 {
		t.Fatalf("the undo's picture is not the screen drawn (%dx%d): %v", p.Width, p.Height, err)
	}
	lines, err := os.ReadFile(screens)
	must(t, err)
	if n := strings.Count(string(lines), "captured"); n != 1 {
		t.Fatalf("the screen was captured %d times for one restore, want once, before its stop", n)
	}
	var held int
	must(t, s.pool.QueryRow(ctx, `SELECT count(*) FROM restore_pictures`).Scan(&held))
	if held != 0 {
		t.Fatalf("%d pictures still held for restores after the undo was taken", held)
	}
}
