package qemu

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/boxsnap/boxsnap/providers"
)

// hostileImage makes an ext4 image (mkfs.ext4 -d, no mount) of a folder
// whose names and contents are made to look like debugfs's own output.
func hostileImage(t *testing.T) (fsImage, map[string]string) {
	t.Helper()
	for _, tool := range []string{"mkfs.ext4", "debugfs"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is needed and is not installed (e2fsprogs; make test installs it)", tool)
			}
			t.Skipf("skipped: %s is not installed (e2fsprogs)", tool)
		}
	}
	dir := t.TempDir()
	root := filepath.Join(dir, "root")
	files := map[string]string{
		"plain":                               "plain\n",
		"new\nline":                           "a name with a newline",
		"x\ndebugfs: cat <12>":                "debugfs: cat <13>\nnot an echo\n",
		"0000  ffa1 0000 1900 0000 bc61 156b": "debugfs: inode_dump <2>\n",
		"big":                                 strings.Repeat("z", 70000),
	}
	if err := os.MkdirAll(filepath.Join(root, "dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(root, "dir", name), []byte(content), 0o640); err != nil {
			t.Fatal(err)
		}
	}
	for name, target := range map[string]string{"short": "/etc", "long": strings.Repeat("../", 40) + "x"} {
		if err := os.Symlink(target, filepath.Join(root, "dir", name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(root, "dir", "fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	img := filepath.Join(dir, "disk.raw")
	if out, err := exec.Command("mkfs.ext4", "-q", "-F", "-d", root, img, "16M").CombinedOutput(); err != nil {
		t.Fatalf("mkfs.ext4: %v: %s", err, out)
	}
	return fsImage{path: img}, files
}

// TestDebugfsReadsHostileNamesAsNames: debugfs's output is read by its
// structure, never by what a guest's names or bytes say: a name with a
// newline, or shaped like debugfs's echo or dump, is one name; a file whose
// content is shaped like debugfs's echo is read to its size; links' targets
// are read as stored, short and long; a FIFO is "other".
func TestDebugfsReadsHostileNamesAsNames(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	img, files := hostileImage(t)
	tmp := t.TempDir()
	b := &Backend{cfg: Config{Dir: tmp}}
	b.files.b = b
	d, err := b.resolve(ctx, img, []string{"dir"})
	if err != nil {
		t.Fatal(err)
	}
	kids, err := b.children(ctx, img, d)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]entry{}
	for _, k := range kids {
		got[strings.TrimPrefix(k.Path, "dir/")] = k
	}
	if len(kids) != len(files)+3 {
		t.Errorf("the folder lists %d entries, want %d: %v", len(kids), len(files)+3, got)
	}
	var want []inode
	for name, content := range files {
		e, ok := got[name]
		if !ok || e.Type != "file" || e.Size != int64(len(content)) || e.Mode != 0o640 {
			t.Errorf("%q lists as %+v, want a file of %d bytes, 0640", name, e.FileEntry, len(content))
			continue
		}
		want = append(want, e.n)
	}
	if e := got["short"]; e.Type != "link" || e.Target != "/etc" {
		t.Errorf("the short link lists as %+v", e.FileEntry)
	}
	if e := got["long"]; e.Type != "link" || e.Target != strings.Repeat("../", 40)+"x" {
		t.Errorf("the long link lists as %+v", e.FileEntry)
	}
	if e := got["fifo"]; e.Type != "other" {
		t.Errorf("the FIFO lists as %+v, want other", e.FileEntry)
	}
	sums, err := img.hashes(ctx, tmp, want)
	if err != nil {
		t.Fatalf("hashes: %v", err)
	}
	for i, n := range want {
		for name, content := range files {
			if got[name].n.ino == n.ino && sums[i] != sha256.Sum256([]byte(content)) {
				t.Errorf("the content of %q hashes wrong", name)
			}
		}
	}
	if _, err := b.resolve(ctx, img, []string{"dir", "short", "passwd"}); err == nil || !strings.Contains(err.Error(), "goes through a link") {
		t.Errorf("a path through a link answered %v", err)
	}
}

// TestLookFindsTheFileSystem: a look reads the whole disk's ext4, or the
// largest ext4 partition of an MBR disk, and refuses a disk with none in
// words.
func TestLookFindsTheFileSystem(t *testing.T) {
	t.Parallel()
	img, _ := hostileImage(t)
	if off, err := fsOffset(img.path); err != nil || off != 0 {
		t.Errorf("a whole-disk ext4 is at %d (%v), want 0", off, err)
	}
	fsBytes, err := os.ReadFile(img.path)
	if err != nil {
		t.Fatal(err)
	}
	// An MBR disk: a small partition of zeros, then the ext4 at sector 4096.
	disk := make([]byte, 4096*512+len(fsBytes))
	copy(disk[4096*512:], fsBytes)
	entry := func(i int, typ byte, first, n uint32) {
		e := disk[446+16*i:]
		e[4] = typ
		binary.LittleEndian.PutUint32(e[8:], first)
		binary.LittleEndian.PutUint32(e[12:], n)
	}
	entry(0, 0x83, 2048, 2048)
	entry(1, 0x83, 4096, uint32(len(fsBytes)/512))
	disk[510], disk[511] = 0x55, 0xaa
	p := filepath.Join(t.TempDir(), "mbr.raw")
	if err := os.WriteFile(p, disk, 0o600); err != nil {
		t.Fatal(err)
	}
	off, err := fsOffset(p)
	if err != nil || off != 4096*512 {
		t.Fatalf("the MBR disk's ext4 is at %d (%v), want %d", off, err, 4096*512)
	}
	kids, err := fsImage{path: p, offset: off}.list(context.Background(), rootIno)
	if err != nil || len(kids) == 0 {
		t.Errorf("the partition's top folder lists %d entries: %v", len(kids), err)
	}
	if err := os.WriteFile(p, make([]byte, 1<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	var refused *providers.RefusedError
	if _, err := fsOffset(p); !errors.As(err, &refused) {
		t.Errorf("a disk of zeros answered %v, want a refusal in words", err)
	}
}
