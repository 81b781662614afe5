package local

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/boxsnap/boxsnap/providers/local/store"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/local/diskimage"
)

// TestABoxOutOfFilesIsToldSo: a running box whose own file system holds as
// many files as it can, far below its disk bound, is told so in words: its
// log says "the box reached its limit of N files", its status says it too
// (Files), a new file fails with no space left on device, it runs on and
// nothing is lost; once files are deleted the words go.
func TestABoxOutOfFilesIsToldSo(t *testing.T) {
	loopOrSkip(t)
	root := t.TempDir()
	if err := Passable(root, "/"); err != nil {
		t.Fatal(err)
	}
	b, err := New(Config{Root: root, Install: "in-test", NoSync: true, StopTimeout: 2 * time.Second, DiskImages: true})
	if err != nil {
		t.Fatal(err)
	}
	unmountAtEnd(t, b)
	const bound = 128 << 20
	cmd := `i=0; while true > f$i; do i=$((i+1)); done; echo "made $i files"; sleep 600`
	g, err := b.Acquire(t.Context(), providers.BoxSpec{Box: providers.BoxIdentity{ID: "bxfiles", Kind: "linux"}, Command: cmd,
		Limits: providers.BoxLimits{DiskBytes: bound}})
	if err != nil {
		t.Fatal(err)
	}
	e := env{b: b, g: g, dir: b.BoxDir(g), ctx: t.Context()}
	e.write(t, "kept.txt", "written before the box ran")
	if err := e.b.Start(e.ctx, e.g); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.b.Stop(context.Background(), e.g) })
	files := diskimage.Inodes(bound)
	var st providers.GuestStatus
	for deadline := time.Now().Add(60 * time.Second); ; {
		var err error
		if st, err = e.b.Status(e.ctx, e.g); err != nil {
			t.Fatal(err)
		}
		if st.DiskStop != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the box's status says nothing of its limit of files after 60 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if d := st.DiskStop; !st.Running || !d.Full || d.Files < files || d.HostFull || d.BoundBytes != bound {
		t.Fatalf("the box out of files has status running=%v %+v, want it running, full, with its limit of at least %d files", st.Running, *d, files)
	}
	logPath := e.b.Path(store.DirState, e.g.Ref+".log")
	want := fmt.Sprintf("boxsnap: the box reached its limit of %d files (its disk bound of 128.0 MiB sets it; its files hold ", st.DiskStop.Files)
	var log string
	for deadline := time.Now().Add(30 * time.Second); ; {
		data, _ := os.ReadFile(logPath)
		log = string(data)
		if strings.Contains(log, want) && strings.Contains(log, "made ") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the box's log does not say %q: %q", want, log)
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, w := range []string{"No space left on device", "it runs on, but a new file, folder or link in it fails",
		"Delete some of them to make room, or raise the disk bound in its template and reset the box."} {
		if !strings.Contains(log, w) {
			t.Fatalf("the box's log does not say %q: %q", w, log)
		}
	}
	if e.read(t, "kept.txt") != "written before the box ran" {
		t.Fatal("a file written before the box ran was lost")
	}
	made, _ := filepath.Glob(filepath.Join(e.dir, "f*"))
	if int64(len(made)) < files*9/10 {
		t.Fatalf("the box made %d files before it ran out, want about %d", len(made), files)
	}
	for _, f := range made[:100] {
		if err := os.Remove(f); err != nil {
			t.Fatal(err)
		}
	}
	for deadline := time.Now().Add(30 * time.Second); ; {
		st, err := e.b.Status(e.ctx, e.g)
		if err != nil {
			t.Fatal(err)
		}
		if st.DiskStop == nil && st.Running {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("with files deleted the status still says running=%v %+v", st.Running, st.DiskStop)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
