package docker_test

import (
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/boxsnap/boxsnap/providers/docker"
	"github.com/boxsnap/boxsnap/providers/providertest"
)

// TestDockerLayerFilesLeftByAKillGoAtStart: a take writes its layers'
// files under boxsnap's data folder (the backend's state folder), not the
// host's temporary folder, and removes them when it ends; a file a take
// killed mid-way left there goes at the backend's next start, and a file
// a live take holds (another process's) stays.
func TestDockerLayerFilesLeftByAKillGoAtStart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	layers := filepath.Join(dir, "layers")
	inDir := func(c *docker.Config) { c.StateDir = dir }
	count := func() int {
		names, err := filepath.Glob(filepath.Join(layers, "boxsnap-layer-*.tar"))
		must(t, err)
		return len(names)
	}
	var during atomic.Int64
	b := newBackend(t, inDir, func(c *docker.Config) {
		c.Hook = func(p string) {
			if p == "take:paused" {
				during.Store(int64(count()))
			}
		}
	})
	box := providertest.NewID("bx")
	g := newGuest(t, b, box)
	writeState(t, b, g, "v1")
	take(t, b, g, box)
	if during.Load() == 0 {
		t.Errorf("in the take's pause the data folder's %s held no layer file: want the take's layers written there", layers)
	}
	if n := count(); n != 0 {
		t.Errorf("after the take %d layer files are left in the data folder", n)
	}

	must(t, os.MkdirAll(layers, 0o700))
	left := filepath.Join(layers, "boxsnap-layer-left.tar")
	must(t, os.WriteFile(left, []byte("a layer a killed take left"), 0o600))
	held := filepath.Join(layers, "boxsnap-layer-held.tar")
	f, err := os.Create(held)
	must(t, err)
	defer f.Close()
	must(t, syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB))
	newBackend(t, inDir)
	if _, err := os.Stat(left); !os.IsNotExist(err) {
		t.Errorf("the layer file a killed take left is still there after the start (%v)", err)
	}
	if _, err := os.Stat(held); err != nil {
		t.Errorf("the layer file a live take holds went at another backend's start: %v", err)
	}
}
