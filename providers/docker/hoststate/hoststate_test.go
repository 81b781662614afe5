package hoststate

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var box = strings.Repeat("c0", 32) // a container ID as the engine writes them

func newState(t *testing.T) State { return State{Dir: t.TempDir(), Log: slog.New(slog.DiscardHandler)} }

func pauses(t *testing.T, s State) []string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(s.Dir, pauseFolder, "*.pause"))
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// TestAdoptPauseTakesOnOnlyAKilledTakes: a paused box with no record of a
// take's pause is a person's (not taken on); one whose record no live
// process holds is a killed take's, taken on and recorded again at once as
// this process's, so a second kill before the pause ends still leaves it
// known; while this process holds it another process does not take it on.
func TestAdoptPauseTakesOnOnlyAKilledTakes(t *testing.T) {
	s := newState(t)
	if ours, rec := s.AdoptPause(box); ours || rec != nil {
		t.Fatalf("a pause with no record was taken on (%v): want it left as a person's", ours)
	}
	if err := os.MkdirAll(filepath.Join(s.Dir, pauseFolder), 0o700); err != nil {
		t.Fatal(err)
	}
	left := filepath.Join(s.Dir, pauseFolder, box+"-left.pause")
	if err := os.WriteFile(left, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	ours, rec := s.AdoptPause(box)
	if !ours || rec == nil {
		t.Fatalf("a pause a killed take recorded was not taken on (%v)", ours)
	}
	if got := pauses(t, s); len(got) != 1 || got[0] == left {
		t.Fatalf("after the take-on the records are %v: want one, this process's, in place of the killed take's", got)
	}
	if again, _ := s.AdoptPause(box); again {
		t.Fatal("a pause another live process took on was taken on again")
	}
	rec.Close() // as a second kill: the record stays, its lock goes
	if ours, rec := s.AdoptPause(box); !ours || rec == nil {
		t.Fatalf("after a second kill the pause was not taken on (%v)", ours)
	} else {
		DropHeld(rec)
	}
	if got := pauses(t, s); len(got) != 0 {
		t.Fatalf("after the pause ended the records %v are left", got)
	}
}

// TestThawAtStartWritesOnlyFreezerFiles: a freeze's record that names a
// file other than a cgroup's freezer file is dropped at the start and
// nothing is written to that file; the layer files a killed take left go.
func TestThawAtStartWritesOnlyFreezerFiles(t *testing.T) {
	s := newState(t)
	target := filepath.Join(t.TempDir(), "freezer.state")
	if err := os.WriteFile(target, []byte("untouched"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{pauseFolder, layerFolder} {
		if err := os.MkdirAll(filepath.Join(s.Dir, dir), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	rec := filepath.Join(s.Dir, pauseFolder, box+"-x.freeze")
	if err := os.WriteFile(rec, []byte(target), 0o600); err != nil {
		t.Fatal(err)
	}
	layer := filepath.Join(s.Dir, layerFolder, "boxsnap-layer-left.tar")
	if err := os.WriteFile(layer, []byte("left"), 0o600); err != nil {
		t.Fatal(err)
	}
	s.SweepAtStart()
	if raw, _ := os.ReadFile(target); string(raw) != "untouched" {
		t.Errorf("a record naming %s made the start write %q there", target, raw)
	}
	for _, p := range []string{rec, layer} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s is left after the start (%v)", filepath.Base(p), err)
		}
	}
}
