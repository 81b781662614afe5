package api_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"image"
	"image/color"
	"image/jpeg"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/providers"
)

func contains(t testing.TB, got string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Fatalf("%q does not say %q", got, w)
		}
	}
}

func TestToolsHappyPath(t *testing.T) {
	t.Parallel()
	e := setup(t)
	token, agent := e.agent(t, "Fix the sign-in flow")
	b := e.Box(t, agent, "amber-fox")
	e.Box(t, agent, "brisk-lake")
	file := filepath.Join(e.Local.BoxDir(providers.Guest{Ref: b.GuestRef}), "notes.txt")
	if err := os.WriteFile(file, []byte("before"), 0o644); err != nil {
		t.Fatal(err)
	}

	// box_snapshot answers its name and ID, what it holds, its size, how
	// long it took and "1 of 5 for this box".
	a := e.call(t, "POST", "/tools/box_snapshot", token, map[string]any{"box": "amber-fox", "name": "before the migration", "note": "pre-upgrade"}).must(t, 200)
	first := a.str("snapshot")
	if !snapshots.ValidID("sn", first) {
		t.Fatalf("snapshot ID %q", first)
	}
	contains(t, a.str("message"), "Took ‘before the migration’ ("+first+") of amber-fox in ", "It holds the disk", "Its size: ", "1 of 5 for this box.")
	if a.str("ofLimit") != "1 of 5 for this box" || a.str("holds") != "disk" || a.str("size") == "" {
		t.Fatalf("answer %s", a.Raw)
	}
	a = e.call(t, "POST", "/tools/box_snapshot", token, map[string]any{"box": "amber-fox"}).must(t, 200)
	second, secondName := a.str("snapshot"), a.str("name")
	contains(t, a.str("message"), "2 of 5 for this box.")

	// box_snapshots: per box, what its snapshots hold or that it has none;
	// per snapshot, name, ID, when, by, holds, size, kept, which guest.
	a = e.call(t, "POST", "/tools/box_snapshots", token, map[string]any{}).must(t, 200)
	boxes := a.JSON["boxes"].([]any)
	if len(boxes) != 2 {
		t.Fatalf("boxes %s", a.Raw)
	}
	for _, x := range boxes {
		bx := x.(map[string]any)
		switch bx["box"] {
		case "amber-fox":
			contains(t, bx["message"].(string), "amber-fox has 2 snapshots you can see. Its snapshots hold the disk")
			sns := bx["snapshots"].([]any)
			s0 := sns[len(sns)-1].(map[string]any)
			if s0["name"] != "before the migration" || s0["id"] != first || s0["by"] != "by the agent in Fix the sign-in flow" ||
				s0["holds"] != "disk" || s0["kept"] != false || s0["guest"] != "current" || s0["note"] != "pre-upgrade" || s0["when"] == "" {
				t.Fatalf("listed %v", s0)
			}
		case "brisk-lake":
			contains(t, bx["message"].(string), "brisk-lake has no snapshots you can see.")
		}
	}

	// box_restore: what it replaced, the undo's name, processes, the state.
	// amber-fox runs no process (an agent's box from no template), so the
	// restore ends none and leaves it stopped, and says so.
	if err := os.WriteFile(file, []byte("after"), 0o644); err != nil {
		t.Fatal(err)
	}
	a = e.call(t, "POST", "/tools/box_restore", token, map[string]any{"box": "amber-fox", "snapshot": "before the migration", "replace": true, "request": "r-1"}).must(t, 200)
	contains(t, a.str("message"), "Restored amber-fox to ‘before the migration’", "everything on its disk since then was replaced",
		"Undo restores ‘before the restore at ", "amber-fox is stopped.")
	if strings.Contains(a.str("message"), "Every process in it ended.") {
		t.Fatalf("a restore of a stopped box says its processes ended: %s", a.Raw)
	}
	if !strings.HasPrefix(a.str("undoName"), "before the restore at ") || a.JSON["processesEnded"] != false || a.JSON["boxState"] != "stopped" {
		t.Fatalf("restore answer %s", a.Raw)
	}
	if got, _ := os.ReadFile(file); string(got) != "before" {
		t.Fatalf("after the restore the file holds %q", got)
	}
	// A repeat of the request is the same restore.
	again := e.call(t, "POST", "/tools/box_restore", token, map[string]any{"box": "amber-fox", "snapshot": first, "replace": true, "request": "r-1"}).must(t, 200)
	if again.str("operation") != a.str("operation") {
		t.Fatalf("a repeat made operation %s, the first was %s", again.str("operation"), a.str("operation"))
	}
	// The request ID reused for a different operation is refused.
	a = e.call(t, "POST", "/tools/box_snapshot_delete", token, map[string]any{"box": "amber-fox", "snapshot": second, "request": "r-1"}).must(t, 409)
	contains(t, a.errorWords(), "The request ID r-1 was used for another call (box_restore): make a new request ID for this one.")
	if a.errorCode() != "request_reused" {
		t.Fatalf("a reused request ID answered code %q", a.errorCode())
	}

	// box_snapshot_delete says what it freed, where known.
	a = e.call(t, "POST", "/tools/box_snapshot_delete", token, map[string]any{"box": "amber-fox", "snapshot": second}).must(t, 200)
	contains(t, a.str("message"), "Deleted ‘"+secondName+"’ of amber-fox")
	if a.str("freed") == "" {
		t.Fatalf("delete answer %s", a.Raw)
	}

	// The box log records the agent's actions.
	a = e.call(t, "GET", "/boxes/amber-fox/log", token, nil).must(t, 200)
	kinds := map[string]bool{}
	for _, ev := range a.JSON["events"].([]any) {
		kinds[ev.(map[string]any)["kind"].(string)] = true
	}
	for _, k := range []string{snapshots.EvSnapshotTaken, snapshots.EvRestored, snapshots.EvSnapshotDeleted} {
		if !kinds[k] {
			t.Fatalf("the box log has no %s: %s", k, a.Raw)
		}
	}
}

// jpegTaker captures a made-up screen as a real JPEG: the core's picture
// step runs for real, with no browser in this test.
type jpegTaker struct{}

func (jpegTaker) Capture(_ context.Context, _ *snapshots.Box) ([]byte, int, int, error) {
	img := image.NewRGBA(image.Rect(0, 0, 32, 20))
	for x := range 32 {
		img.Set(x, x%20, color.RGBA{R: 200, A: 255})
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: snapshots.PictureQuality}); err != nil {
		return nil, 0, 0, err
	}
	return buf.Bytes(), 32, 20, nil
}

func TestToolSnapshotsPictures(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.Pictures.Use(jpegTaker{})
	token, _ := e.agent(t, "Draw the chart")
	e.call(t, "POST", "/boxes", token, map[string]any{"name": "dusky-wren", "template": "with-screen"}).must(t, 201)
	a := e.call(t, "POST", "/tools/box_snapshot", token, map[string]any{"box": "dusky-wren", "name": "with chart"}).must(t, 200)
	id := a.str("snapshot")

	// Pictures only when asked.
	a = e.call(t, "POST", "/tools/box_snapshots", token, map[string]any{"box": "dusky-wren"}).must(t, 200)
	sn := a.JSON["boxes"].([]any)[0].(map[string]any)["snapshots"].([]any)[0].(map[string]any)
	if _, ok := sn["picture"]; ok {
		t.Fatal("a picture without pictures: true")
	}
	a = e.call(t, "POST", "/tools/box_snapshots", token, map[string]any{"box": "dusky-wren", "pictures": true}).must(t, 200)
	sn = a.JSON["boxes"].([]any)[0].(map[string]any)["snapshots"].([]any)[0].(map[string]any)
	pic, ok := sn["picture"].(map[string]any)
	if !ok {
		t.Fatalf("no picture: %s", a.Raw)
	}
	raw, err := base64.StdEncoding.DecodeString(pic["jpeg"].(string))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := jpeg.Decode(bytes.NewReader(raw)); err != nil {
		t.Fatalf("the picture is not a JPEG: %v", err)
	}
	// The REST picture is the same JPEG.
	p := e.call(t, "GET", "/boxes/dusky-wren/snapshots/"+id+"/picture", token, nil).must(t, 200)
	if !bytes.Equal(p.Raw, raw) {
		t.Fatal("the REST picture differs from the tool's")
	}

	// Kept by the person, the agent still sees it, without its picture.
	e.call(t, "POST", "/boxes/dusky-wren/snapshots/"+id+"/keep?wait=true", e.owner, map[string]any{"days": 30}).must(t, 200)
	a = e.call(t, "POST", "/tools/box_snapshots", token, map[string]any{"box": "dusky-wren", "pictures": true}).must(t, 200)
	sn = a.JSON["boxes"].([]any)[0].(map[string]any)["snapshots"].([]any)[0].(map[string]any)
	if sn["kept"] != true {
		t.Fatalf("kept snapshot listed as %v", sn)
	}
	if _, ok := sn["picture"]; ok {
		t.Fatal("the agent sees a kept snapshot's picture")
	}
	e.call(t, "GET", "/boxes/dusky-wren/snapshots/"+id+"/picture", token, nil).must(t, http.StatusNotFound)
	// The person sees it.
	e.call(t, "GET", "/boxes/dusky-wren/snapshots/"+id+"/picture", e.owner, nil).must(t, 200)
}
