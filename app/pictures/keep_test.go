package pictures_test

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/jpeg"
	"sync"
	"testing"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/take"
	"github.com/boxsnap/boxsnap/providers"
)

// events is what the box went through, in order: its screen captured, and
// each restore step the backend ran.
type events struct {
	mu   sync.Mutex
	list []string
}

func (e *events) add(s string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.list = append(e.list, s)
}

func (e *events) index(s string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	for i, x := range e.list {
		if x == s {
			return i
		}
	}
	return -1
}

// screenTaker captures a made-up screen as a real JPEG, noting when.
type screenTaker struct{ ev *events }

func (s screenTaker) Capture(_ context.Context, _ *snapshots.Box) ([]byte, int, int, error) {
	s.ev.add("capture")
	img := image.NewRGBA(image.Rect(0, 0, 32, 20))
	for x := range 32 {
		img.Set(x, x%20, color.RGBA{G: 200, A: 255})
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: snapshots.PictureQuality}); err != nil {
		return nil, 0, 0, err
	}
	return buf.Bytes(), 32, 20, nil
}

// stepsBackend notes each restore step the backend runs.
type stepsBackend struct {
	providers.Backend
	ev *events
}

func (s *stepsBackend) RestoreSnapshot(ctx context.Context, g providers.Guest, ref providers.SnapshotRef, step providers.RestoreStep, rec providers.Recorder) (providers.RestoreProgress, error) {
	s.ev.add(string(step))
	return s.Backend.RestoreSnapshot(ctx, g, ref, step, rec)
}

// TestUndoHasPictureFromBeforeTheStop: "An undo's picture is from before the
// stop": a box with a screen is restored; its undo has a picture, captured
// before the restore stopped the box.
func TestUndoHasPictureFromBeforeTheStop(t *testing.T) {
	t.Parallel()
	ev := &events{}
	e := coretest.New(t, coretest.Options{Wrap: func(b snapshots.Backend) snapshots.Backend {
		b.Snap = &stepsBackend{Backend: b.Snap, ev: ev}
		return b
	}})
	e.Pictures.Use(screenTaker{ev: ev})
	ctx := context.Background()
	owner := snapshots.Owner()
	b, err := e.Boxes.AcquireBox(ctx, owner, snapshots.BoxRequest{Name: "amber-fox", Backend: "local", HasScreen: true, ScreenURL: "http://127.0.0.1:1/"})
	if err != nil {
		t.Fatal(err)
	}
	op, sn, err := e.Take.Take(ctx, owner, take.TakeRequest{Box: b.Name, Name: "before the migration"})
	if err != nil {
		t.Fatal(err)
	}
	if got := e.Wait(t, op); got.State != snapshots.OpDone {
		t.Fatalf("take: %s %s", got.State, deref(got.Error))
	}
	ev.mu.Lock()
	ev.list = nil
	ev.mu.Unlock()

	op, err = e.Restores.Restore(ctx, owner, snapshots.RestoreRequest{Box: b.Name, Snapshot: sn.ID})
	if err != nil {
		t.Fatal(err)
	}
	op = e.Wait(t, op)
	if op.State != snapshots.OpDone || op.UndoID == nil {
		t.Fatalf("restore %s: %s", op.State, deref(op.Error))
	}
	p, err := e.Pictures.Get(ctx, owner, *op.UndoID)
	if err != nil {
		t.Fatalf("the undo has no picture: %v", err)
	}
	if _, err := jpeg.Decode(bytes.NewReader(p.JPEG)); err != nil || p.Width != 32 || p.Height != 20 {
		t.Fatalf("the undo's picture is not the screen's JPEG (%dx%d): %v", p.Width, p.Height, err)
	}
	capture, stop := ev.index("capture"), ev.index(string(providers.StepStop))
	if capture < 0 || stop < 0 || capture > stop {
		t.Fatalf("the undo's picture is not from before the stop: %v", ev.list)
	}
	undo, _, err := e.Core.Snapshot(ctx, owner, *op.UndoID)
	if err != nil {
		t.Fatal(err)
	}
	if undo.Picture != "taken" {
		t.Fatalf("the undo's picture state is %q, want taken", undo.Picture)
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
