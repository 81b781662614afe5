package diskimage

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestUnmountThroughALinkLeavesNoMount: an image mounted on a box's folder
// named through a link (a data folder under a linked folder) is unmounted
// whole, the box's folder and the image's own mount beside it, and the
// image's mount folder is removed.
func TestUnmountThroughALinkLeavesNoMount(t *testing.T) {
	needLoop(t)
	real := t.TempDir()
	link := filepath.Join(t.TempDir(), "data")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	img, dir := filepath.Join(link, "box.img"), filepath.Join(link, "box")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := Make(t.Context(), img, 32<<20); err != nil {
		t.Fatal(err)
	}
	if err := MountFresh(img, dir); err != nil {
		t.Fatal(err)
	}
	under := func() []string {
		data, err := os.ReadFile("/proc/self/mountinfo")
		if err != nil {
			t.Fatal(err)
		}
		var at []string
		for _, line := range strings.Split(string(data), "\n") {
			if f := strings.Fields(line); len(f) > 4 && strings.HasPrefix(unescape(f[4]), real+"/") {
				at = append(at, unescape(f[4]))
			}
		}
		return at
	}
	t.Cleanup(func() {
		for _, m := range under() {
			_ = unmountOne(m)
		}
	})
	if got := under(); len(got) != 2 {
		t.Fatalf("the image is mounted on %v, want its own folder and the box's", got)
	}
	if err := Unmount(dir); err != nil {
		t.Fatal(err)
	}
	if got := under(); len(got) != 0 {
		t.Fatalf("after the unmount %v are still mounted", got)
	}
	if _, err := os.Lstat(FSDirOf(img)); !os.IsNotExist(err) {
		t.Fatalf("the image's mount folder is left: %v", err)
	}
}

// needLoop skips a test that mounts an image where the host cannot (not
// root, no loop devices), and fails it under CI=true, where the host must.
func needLoop(t *testing.T) {
	t.Helper()
	why := ""
	if os.Geteuid() != 0 {
		why = "a loop mount needs root"
	} else if _, err := os.Stat("/dev/loop-control"); err != nil {
		why = "no loop devices"
	}
	if why == "" {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatal(why)
	}
	t.Skip(why)
}
