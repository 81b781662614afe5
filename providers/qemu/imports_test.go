package qemu

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/boxsnap/boxsnap/providers"
)

// TestImportRefusesHostileQcow2: everything in an archive is hostile. A
// qcow2 that names /etc/shadow as its backing file (whether its archive
// says it is whole or incremental), one that keeps its data in an external
// file, one that is not a qcow2, one that does not match its hash (or whose
// stream that change breaks) and one cut short are each refused in words, and nothing is published; a plain one is imported,
// and a disk over it only into the same box.
func TestImportRefusesHostileQcow2(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	b, err := New(Config{ID: "qemu-test", Install: "intest", Dir: dir, Templates: map[string]Template{"busybox": {}}})
	if err != nil {
		t.Fatal(err)
	}
	src := t.TempDir()
	img := func(name string, args ...string) string {
		t.Helper()
		p := filepath.Join(src, name)
		if err := qemuImg(ctx, append(append([]string{"create", "-q", "-f", "qcow2"}, args...), p, "64M")...); err != nil {
			t.Fatal(err)
		}
		return p
	}
	archiveOf := func(id, disk, base string) []byte {
		t.Helper()
		info := archiveInfo{Format: archiveFormat, Kind: archiveKind, ID: id, Name: "evil",
			Template: "busybox", TakenAt: time.Now().UTC(), Base: base}
		var err error
		if info.DiskSha256, info.DiskBytes, err = fileSum(disk); err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := writeArchive(info, disk, &buf); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	archive := func(disk, base string) []byte { return archiveOf("sn"+strings.Repeat("a", 12), disk, base) }
	shadow, err := os.Stat("/etc/shadow")
	if err != nil {
		t.Fatal(err)
	}
	raw := filepath.Join(src, "raw")
	if err := os.WriteFile(raw, bytes.Repeat([]byte("not a qcow2 "), 1000), 0o600); err != nil {
		t.Fatal(err)
	}
	plain := img("plain.qcow2")
	badSum := archive(plain, "")
	badSum[len(badSum)/2] ^= 0xff // inside the gzip stream: a different disk, or a broken stream
	whole := archive(plain, "")
	cut := whole[:len(whole)*3/4] // the stream ends part-way through

	cases := map[string][]byte{
		"a whole disk backed by /etc/shadow":        archive(img("whole.qcow2", "-u", "-F", "raw", "-b", "/etc/shadow"), ""),
		"an incremental disk backed by /etc/shadow": archive(img("incr.qcow2", "-u", "-F", "raw", "-b", "/etc/shadow"), "sn"+strings.Repeat("b", 12)),
		"a whole qcow2 backed by /etc/shadow":       archive(img("wholeq.qcow2", "-u", "-F", "qcow2", "-b", "/etc/shadow"), ""),
		"an incremental qcow2 on /etc/shadow":       archive(img("incrq.qcow2", "-u", "-F", "qcow2", "-b", "/etc/shadow"), "sn"+strings.Repeat("b", 12)),
		"a disk with an external data file":         archive(img("data.qcow2", "-o", "data_file="+filepath.Join(src, "victim")), ""),
		"a raw file called a qcow2":                 archive(raw, ""),
		"a disk that does not match its hash":       badSum,
		"an archive cut short":                      cut,
	}
	for name, a := range cases {
		_, err := b.ImportSnapshots(ctx, providers.ImportOptions{Group: "bx" + strings.Repeat("c", 12)}, []io.Reader{bytes.NewReader(a)})
		var re *providers.RefusedError
		if !errors.As(err, &re) {
			t.Errorf("%s: the import answers %v, want a refusal in words", name, err)
		} else {
			t.Logf("%s: %v", name, err)
		}
		if held, err := b.importedSnapshots(); err != nil || len(held) != 0 {
			t.Errorf("%s: the refused import published %d snapshots (%v)", name, len(held), err)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(dir, importsDirName, "*")); len(left) != 0 {
		t.Errorf("refused imports left %v", left)
	}
	if now, err := os.Stat("/etc/shadow"); err != nil || !now.ModTime().Equal(shadow.ModTime()) || now.Size() != shadow.Size() {
		t.Errorf("/etc/shadow changed: %v", err)
	}

	got, err := b.ImportSnapshots(ctx, providers.ImportOptions{Group: "bx" + strings.Repeat("c", 12)}, []io.Reader{bytes.NewReader(archive(plain, ""))})
	if err != nil || len(got) != 1 {
		t.Fatalf("a plain qcow2's import answers %+v, %v; want it imported", got, err)
	}

	// An incremental disk over that snapshot is another box's to read only
	// when it is imported into the same box.
	incr := archiveOf("sn"+strings.Repeat("e", 12), img("over.qcow2", "-u", "-F", "qcow2", "-b", baseName), got[0].Ref.ID)
	var re *providers.RefusedError
	if _, err := b.ImportSnapshots(ctx, providers.ImportOptions{Group: "bx" + strings.Repeat("d", 12)}, []io.Reader{bytes.NewReader(incr)}); !errors.As(err, &re) {
		t.Errorf("an archive over another box's snapshot: the import answers %v, want a refusal", err)
	}
	if _, err := b.ImportSnapshots(ctx, providers.ImportOptions{Group: "bx" + strings.Repeat("c", 12)}, []io.Reader{bytes.NewReader(incr)}); err != nil {
		t.Errorf("an archive over the same box's snapshot: %v", err)
	}
}
