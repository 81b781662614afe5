package local

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/local/confined"
	"github.com/boxsnap/boxsnap/providers/local/disks"
	"github.com/boxsnap/boxsnap/providers/local/process"
	"github.com/boxsnap/boxsnap/providers/local/store"
	"github.com/boxsnap/boxsnap/providers/local/sweep"
)

type env struct {
	b   *Backend
	g   providers.Guest
	dir string
	ctx context.Context
}

func setup(t *testing.T) env {
	t.Helper()
	return setupAt(t, t.TempDir(), "")
}

func setupAt(t *testing.T, root, command string) env {
	t.Helper()
	b, err := New(Config{Root: root, Install: "in-test", NoSync: true, StopTimeout: 2 * time.Second})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	unmountAtEnd(t, b)
	box := "bx" + store.RandomSuffix()[:12]
	g, err := b.Acquire(t.Context(), providers.BoxSpec{Box: providers.BoxIdentity{ID: box, Kind: "linux"}, Command: command})
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	t.Cleanup(func() { _ = b.Stop(context.Background(), g) })
	return env{b: b, g: g, dir: b.BoxDir(g), ctx: t.Context()}
}

func (e env) write(t *testing.T, rel, content string) {
	t.Helper()
	p := filepath.Join(e.dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func (e env) read(t *testing.T, rel string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(e.dir, rel))
	if err != nil {
		t.Fatalf("read %s: %v", rel, err)
	}
	return string(data)
}

func (e env) take(t *testing.T) (providers.SnapshotTaken, providers.SnapshotRef) {
	t.Helper()
	taken, err := e.b.Snapshot(e.ctx, e.g, providers.SnapshotTake{Label: providers.Label{Box: e.g.Ref}}, nil)
	if err != nil {
		t.Fatalf("Snapshot: %v", err)
	}
	return taken, providers.SnapshotRef{ID: taken.Ref, Ref: taken.Ref, Guest: e.g}
}

func (e env) restore(t *testing.T, ref providers.SnapshotRef) error {
	t.Helper()
	_, err := e.b.RestoreSnapshot(e.ctx, e.g, ref, providers.StepRollback, nil)
	return err
}

func (e env) held(t *testing.T, id string) (providers.HeldSnapshot, bool) {
	t.Helper()
	list, err := e.b.HeldSnapshots(e.ctx)
	if err != nil {
		t.Fatalf("HeldSnapshots: %v", err)
	}
	for _, h := range list {
		if h.Ref.Ref == id {
			return h, true
		}
	}
	return providers.HeldSnapshot{}, false
}

func contentCount(t *testing.T, b *Backend) int {
	t.Helper()
	n := 0
	err := filepath.WalkDir(b.Path(store.DirContent), func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			n++
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// listing describes a folder exactly: every path's type, mode, size, mtime,
// content hash and link target.
func listing(t *testing.T, dir string) string {
	t.Helper()
	var lines []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		st := fi.Sys().(*syscall.Stat_t)
		line := fmt.Sprintf("%s %v uid=%d gid=%d", rel, fi.Mode(), st.Uid, st.Gid)
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			line += " -> " + target + fmt.Sprintf(" mtime=%d", st.Mtim.Nano())
		case fi.Mode().IsRegular():
			data, _ := os.ReadFile(p)
			sum := sha256.Sum256(data)
			line += fmt.Sprintf(" size=%d mtime=%d sha=%s", fi.Size(), st.Mtim.Nano(), hex.EncodeToString(sum[:8]))
		case fi.IsDir():
			line += fmt.Sprintf(" mtime=%d", st.Mtim.Nano())
		}
		lines = append(lines, line)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

func TestRestoreBringsTheFolderToExactlyTheSnapshot(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.write(t, "src/main.go", "package main\n")
	e.write(t, "src/util/strings.go", "package util\n")
	e.write(t, "notes.txt", "first notes\n")
	e.write(t, "gone-later.txt", "this goes\n")
	if err := os.MkdirAll(filepath.Join(e.dir, "empty/inner"), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(e.dir, "notes.txt"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../../../etc/passwd", filepath.Join(e.dir, "src/outside")); err != nil {
		t.Fatal(err)
	}
	old := time.Date(2020, 1, 2, 3, 4, 5, 600, time.UTC)
	if err := os.Chtimes(filepath.Join(e.dir, "src/main.go"), old, old); err != nil {
		t.Fatal(err)
	}
	want := listing(t, e.dir)
	_, ref := e.take(t)

	// Everything changes: added, removed, rewritten, same size, modes,
	// times, a file made a folder, a folder made a file, the link retargeted.
	e.write(t, "added.txt", "new since\n")
	e.write(t, "src/util/strings.go", "package UTIL\n") // same size
	e.write(t, "notes.txt", "rewritten notes, longer\n")
	os.Remove(filepath.Join(e.dir, "gone-later.txt"))
	os.Chmod(filepath.Join(e.dir, "src/main.go"), 0o755)
	os.Chtimes(filepath.Join(e.dir, "src/main.go"), time.Now(), time.Now())
	os.RemoveAll(filepath.Join(e.dir, "empty"))
	e.write(t, "empty", "now a file")
	os.Remove(filepath.Join(e.dir, "src/outside"))
	os.Symlink("/somewhere/else", filepath.Join(e.dir, "src/outside"))
	os.MkdirAll(filepath.Join(e.dir, "new/deep/folder"), 0o755)
	if listing(t, e.dir) == want {
		t.Fatal("the changes changed nothing")
	}
	if err := e.restore(t, ref); err != nil {
		t.Fatalf("restore: %v", err)
	}
	if got := listing(t, e.dir); got != want {
		t.Fatalf("after the restore the folder is\n%s\nwant exactly the snapshot\n%s", got, want)
	}
	// The link is a link, never followed.
	if target, err := os.Readlink(filepath.Join(e.dir, "src/outside")); err != nil || target != "../../../etc/passwd" {
		t.Fatalf("the link outside the box came back as %q, %v", target, err)
	}
}

func TestTakeReadsOnlyWhatChanged(t *testing.T) {
	t.Parallel()
	e := setup(t)
	for i := 0; i < 50; i++ {
		e.write(t, fmt.Sprintf("f%02d.txt", i), strings.Repeat(fmt.Sprint(i), 1000))
	}
	_, _ = e.take(t)
	var copied []string
	e.b.hooks.AfterCopy = func(rel string) { copied = append(copied, rel) }
	e.write(t, "f07.txt", strings.Repeat("x", 1000))
	// Same size, same mtime put back: the ctime still tells.
	p := filepath.Join(e.dir, "f08.txt")
	fi, _ := os.Stat(p)
	e.write(t, "f08.txt", strings.Repeat("y", int(fi.Size())))
	os.Chtimes(p, fi.ModTime(), fi.ModTime())
	taken, ref := e.take(t)
	sort.Strings(copied)
	if strings.Join(copied, ",") != "f07.txt,f08.txt" {
		t.Fatalf("the incremental take read %v, want only f07.txt and f08.txt", copied)
	}
	if taken.Size == nil || taken.Size.Bytes != 2000 {
		t.Fatalf("the take added %+v, want 2000 bytes of new content", taken.Size)
	}
	e.write(t, "f08.txt", "changed again")
	if err := e.restore(t, ref); err != nil {
		t.Fatal(err)
	}
	if got := e.read(t, "f08.txt"); got != strings.Repeat("y", 1000) {
		t.Fatalf("f08.txt came back as %q", got[:10])
	}
}

func TestAfterARestoreTheNextTakeReadsOnlyWhatChangedSince(t *testing.T) {
	t.Parallel()
	e := setup(t)
	for i := 0; i < 20; i++ {
		e.write(t, fmt.Sprintf("f%02d.txt", i), strings.Repeat(fmt.Sprint(i), 100))
	}
	_, r1 := e.take(t)
	e.write(t, "f03.txt", "changed")
	e.write(t, "f04.txt", "changed too")
	_, _ = e.take(t)
	if err := e.restore(t, r1); err != nil {
		t.Fatal(err)
	}
	var copied []string
	e.b.hooks.AfterCopy = func(rel string) { copied = append(copied, rel) }
	_, r3 := e.take(t)
	if len(copied) != 0 {
		t.Fatalf("the take after a restore read %v, which the restore itself wrote", copied)
	}
	e.write(t, "f05.txt", "after")
	_, _ = e.take(t)
	if strings.Join(copied, ",") != "f05.txt" {
		t.Fatalf("the next take read %v, want only f05.txt", copied)
	}
	if err := e.restore(t, r3); err != nil {
		t.Fatal(err)
	}
	if e.read(t, "f03.txt") != strings.Repeat("3", 100) || e.read(t, "f05.txt") != strings.Repeat("5", 100) {
		t.Fatal("the snapshot taken from the stat cache does not restore the files it should hold")
	}
}

func TestTakePausesTheRunningProcessGroupAndResumesIt(t *testing.T) {
	t.Parallel()
	e := setupAt(t, passable(t), "while :; do date +%s%N > tick; done")
	e.write(t, "a.txt", "a")
	if err := e.b.Start(e.ctx, e.g); err != nil {
		t.Fatal(err)
	}
	st, _ := e.b.Status(e.ctx, e.g)
	if !st.Running {
		t.Fatal("Status says the started box does not run")
	}
	e.b.mu.Lock()
	pid, cg := e.b.procs[e.g.Ref].cmd.Process.Pid, e.b.procs[e.g.Ref].cgroup
	e.b.mu.Unlock()
	// A process cgroup v2 froze sleeps (S) in /proc, where v1's freezer and
	// SIGSTOP show it D and T: there its cgroup says it is frozen.
	stopped := func() bool {
		if cg != "" && process.IsV2(cg) {
			events, _ := os.ReadFile(filepath.Join(cg, "cgroup.events"))
			return strings.Contains(string(events), "frozen 1")
		}
		return process.GroupStopped(pid)
	}
	var stoppedDuring []bool
	e.b.hooks.AfterCopy = func(string) { stoppedDuring = append(stoppedDuring, stopped()) }
	taken, _ := e.take(t)
	if len(stoppedDuring) == 0 {
		t.Fatal("the take copied nothing")
	}
	for _, s := range stoppedDuring {
		if !s {
			t.Fatal("the box's process ran while the take copied its files")
		}
	}
	if taken.Paused <= 0 {
		t.Fatalf("the take reports a pause of %v", taken.Paused)
	}
	deadline := time.Now().Add(5 * time.Second)
	for stopped() {
		if time.Now().After(deadline) {
			t.Fatal("the box's process was not resumed after the take")
		}
		runtimeGosched()
	}
	if err := e.b.Stop(e.ctx, e.g); err != nil {
		t.Fatal(err)
	}
	deadline = time.Now().Add(5 * time.Second)
	for groupLives(pid) {
		if time.Now().After(deadline) {
			t.Fatal("after Stop a process of the box's group still lives")
		}
		runtimeGosched()
	}
	st, _ = e.b.Status(e.ctx, e.g)
	if st.Running {
		t.Fatal("Status says the stopped box runs")
	}
}

func TestStopKillsAGroupThatIgnoresSIGTERM(t *testing.T) {
	t.Parallel()
	root := passable(t)
	b, err := New(Config{Root: root, NoSync: true, StopTimeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	unmountAtEnd(t, b)
	g, err := b.Acquire(t.Context(), providers.BoxSpec{Box: providers.BoxIdentity{ID: "bxstubborn"}, Command: "trap '' TERM; while :; do sleep 1; done"})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Start(t.Context(), g); err != nil {
		t.Fatal(err)
	}
	if err := b.Stop(t.Context(), g); err != nil {
		t.Fatal(err)
	}
	if st, _ := b.Status(t.Context(), g); st.Running {
		t.Fatal("a process ignoring SIGTERM still runs after Stop")
	}
}

func TestAFileThatVanishesDuringATakeIsLeftOutAndTheSnapshotRestores(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.write(t, "keep.txt", "kept")
	e.write(t, "vanishes.txt", "here for a moment")
	e.b.hooks.AfterCopy = func(rel string) {
		if rel == "vanishes.txt" {
			os.Remove(filepath.Join(e.dir, rel))
		}
	}
	_, ref := e.take(t)
	e.b.hooks.AfterCopy = nil
	e.write(t, "vanishes.txt", "back")
	if err := e.restore(t, ref); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(e.dir, "vanishes.txt")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a file gone during the take came back from the snapshot: %v", err)
	}
	if e.read(t, "keep.txt") != "kept" {
		t.Fatal("keep.txt did not come back")
	}
}

func TestAFileThatKeepsChangingFailsTheTakeCleanly(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.write(t, "stable.txt", "stable content")
	e.write(t, "busy.log", "start\n")
	n := 0
	e.b.hooks.AfterCopy = func(rel string) {
		if rel == "busy.log" {
			n++
			f, _ := os.OpenFile(filepath.Join(e.dir, rel), os.O_APPEND|os.O_WRONLY, 0)
			fmt.Fprintf(f, "line %d\n", n)
			f.Close()
		}
	}
	_, err := e.b.Snapshot(e.ctx, e.g, providers.SnapshotTake{Label: providers.Label{Snapshot: "snbusy"}}, nil)
	if err == nil || !strings.Contains(err.Error(), "kept changing") {
		t.Fatalf("a take of a file that never stops changing answered %v", err)
	}
	if _, ok := e.held(t, "snbusy"); ok {
		t.Fatal("a failed take left a snapshot listed")
	}
	if c := contentCount(t, e.b); c != 0 {
		t.Fatalf("a failed take left %d content files behind", c)
	}
	// A file that changes once is copied again and the take succeeds.
	n = 0
	e.b.hooks.AfterCopy = func(rel string) {
		if rel == "busy.log" && n == 0 {
			n++
			os.WriteFile(filepath.Join(e.dir, rel), []byte("settled\n"), 0o644)
		}
	}
	_, ref := e.take(t)
	e.b.hooks.AfterCopy = nil
	e.write(t, "busy.log", "later")
	if err := e.restore(t, ref); err != nil {
		t.Fatal(err)
	}
	if got := e.read(t, "busy.log"); got != "settled\n" {
		t.Fatalf("the retried file came back as %q", got)
	}
}

func TestADiskFillingDuringATakeFailsWithNothingHalfPublished(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	if out, err := runCmd("mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", root); err != nil {
		t.Fatalf("mount a small tmpfs (the test needs root): %v %s", err, out)
	}
	t.Cleanup(func() { runCmd("umount", root) })
	e := setupAt(t, root, "")
	// 6 MiB in the box leaves no room for a second copy in the store.
	for i := 0; i < 6; i++ {
		buf := make([]byte, 1<<20)
		for j := range buf {
			buf[j] = byte(i*7 + j*13)
		}
		if err := os.WriteFile(filepath.Join(e.dir, fmt.Sprintf("big%d", i)), buf, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, err := e.b.Snapshot(e.ctx, e.g, providers.SnapshotTake{Label: providers.Label{Snapshot: "snfull"}}, nil)
	// The room check once the copy's size is known refuses it before any
	// copy; a store that fills during the copies fails with ENOSPC.
	if err == nil || !errors.Is(err, syscall.ENOSPC) && !(errors.Is(err, providers.ErrRefused) && strings.Contains(err.Error(), "free")) {
		t.Fatalf("a take into a full store answered %v, want no space", err)
	}
	if _, ok := e.held(t, "snfull"); ok {
		t.Fatal("a take that filled the disk left a snapshot listed")
	}
	if c := contentCount(t, e.b); c != 0 {
		t.Fatalf("the failed take's content was not collected: %d files", c)
	}
	left, _ := os.ReadDir(e.b.Path(store.DirTmp))
	snaps, _ := os.ReadDir(e.b.Path(store.DirSnapshots))
	if len(left) != 0 || len(snaps) != 0 {
		t.Fatalf("left behind: tmp %d, snapshots %d", len(left), len(snaps))
	}
}

func TestDamageOnDiskIsFoundAndNeverRestored(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.write(t, "a.txt", "alpha content")
	e.write(t, "b.txt", "bravo content")
	_, r1 := e.take(t)
	e.write(t, "c.txt", "charlie")
	_, r2 := e.take(t)

	// A damaged manifest: found by its checksum.
	mp := filepath.Join(e.b.SnapDir(r1.Ref), store.FileManifest)
	data, _ := os.ReadFile(mp)
	data[len(data)-5] ^= 0x20
	os.WriteFile(mp, data, 0o600)
	h, _ := e.held(t, r1.Ref)
	if !h.Incomplete || !strings.Contains(h.Error, "damaged") {
		t.Fatalf("a damaged manifest is listed as %+v", h)
	}
	if err := e.restore(t, r1); !errors.Is(err, providers.ErrIncomplete) {
		t.Fatalf("restoring a snapshot with a damaged manifest answered %v", err)
	}

	// Damaged content of the same size: the restore checks before it changes
	// anything, refuses, and the snapshot is listed incomplete from then on.
	e.write(t, "a.txt", "ALPHA CONTENT")
	before := listing(t, e.dir)
	var m store.Manifest
	store.ReadChecked(filepath.Join(e.b.SnapDir(r2.Ref), store.FileManifest), &m)
	var hash string
	for _, en := range m.Entries {
		if en.Path == "a.txt" {
			hash = en.Hash
		}
	}
	cp := e.b.ContentPath(hash)
	os.Chmod(cp, 0o644)
	os.WriteFile(cp, []byte("alphX content"), 0o444)
	err := e.restore(t, r2)
	var re *providers.RefusedError
	if !errors.As(err, &re) || !strings.Contains(re.Why, "damaged") {
		t.Fatalf("restoring damaged content answered %v", err)
	}
	if listing(t, e.dir) != before {
		t.Fatal("a refused restore changed the box")
	}
	h, _ = e.held(t, r2.Ref)
	if !h.Incomplete || !strings.Contains(h.Error, "damaged") {
		t.Fatalf("a snapshot with damaged content is listed as %+v", h)
	}
}

func TestTruncatedContentIsListedIncomplete(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.write(t, "a.txt", "some content here")
	_, r := e.take(t)
	var m store.Manifest
	store.ReadChecked(filepath.Join(e.b.SnapDir(r.Ref), store.FileManifest), &m)
	for _, en := range m.Entries {
		if en.Type == store.TypeFile {
			os.Truncate(e.b.ContentPath(en.Hash), 3)
		}
	}
	h, _ := e.held(t, r.Ref)
	if !h.Incomplete || !strings.Contains(h.Error, "missing or damaged") {
		t.Fatalf("truncated content is listed as %+v", h)
	}
}

func TestABoxFolderRemovedBehindBoxsnapsBack(t *testing.T) {
	t.Parallel()
	e := setup(t)
	// A folder that is a file system of its own goes only once unmounted.
	_ = disks.Unmount(e.dir)
	os.RemoveAll(e.dir)
	st, err := e.b.Status(e.ctx, e.g)
	if err != nil || st.Exists {
		t.Fatalf("Status of a removed box = %+v, %v; want it not to exist", st, err)
	}
	if _, err := e.b.PlanSnapshots(e.ctx, e.g, nil); !errors.Is(err, providers.ErrNotFound) {
		t.Fatalf("PlanSnapshots of a removed box answered %v, want ErrNotFound", err)
	}
}

func TestADeleteCutShortIsIncompleteAndASecondDeleteFinishesIt(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.write(t, "a.txt", "only in this snapshot")
	_, r := e.take(t)
	e.b.Deletes.Hooks.DeleteStep = func(step string) error {
		if step == sweep.DeleteSweep {
			return errors.New("power cut")
		}
		return nil
	}
	err := e.b.DeleteSnapshot(e.ctx, r, nil)
	if !errors.Is(err, providers.ErrIncomplete) {
		t.Fatalf("a delete cut short answered %v", err)
	}
	h, ok := e.held(t, r.Ref)
	if !ok || !h.Incomplete || !strings.Contains(h.Error, "delete") {
		t.Fatalf("a delete cut short is listed as %+v (%v)", h, ok)
	}
	if err := e.restore(t, r); !errors.Is(err, providers.ErrIncomplete) {
		t.Fatalf("restoring a half-deleted snapshot answered %v", err)
	}
	e.b.Deletes.Hooks.DeleteStep = nil
	if err := e.b.DeleteSnapshot(e.ctx, r, nil); err != nil {
		t.Fatalf("the second delete: %v", err)
	}
	if _, ok := e.held(t, r.Ref); ok {
		t.Fatal("the snapshot is still listed after the second delete")
	}
	if c := contentCount(t, e.b); c != 0 {
		t.Fatalf("the finished delete left %d content files", c)
	}
}

func TestDeleteFreesOnlyContentNoOtherSnapshotUses(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.write(t, "shared.txt", "in both")
	e.write(t, "first.txt", "only in the first")
	_, r1 := e.take(t)
	os.Remove(filepath.Join(e.dir, "first.txt"))
	e.write(t, "second.txt", "only in the second")
	_, r2 := e.take(t)
	// The identity marker, shared.txt once, first.txt and second.txt.
	if c := contentCount(t, e.b); c != 4 {
		t.Fatalf("content files = %d, want 4 (shared content once)", c)
	}
	if err := e.b.DeleteSnapshot(e.ctx, r1, nil); err != nil {
		t.Fatal(err)
	}
	if c := contentCount(t, e.b); c != 3 {
		t.Fatalf("after the delete, content files = %d, want 3", c)
	}
	os.RemoveAll(filepath.Join(e.dir, "shared.txt"))
	if err := e.restore(t, r2); err != nil {
		t.Fatal(err)
	}
	if e.read(t, "shared.txt") != "in both" {
		t.Fatal("shared content was freed with the first snapshot")
	}
}

func TestDeleteAndTakeAtTheSameMoment(t *testing.T) {
	t.Parallel()
	e := setup(t)
	for i := 0; i < 200; i++ {
		e.write(t, fmt.Sprintf("f%03d", i), fmt.Sprintf("content %d", i))
	}
	_, r1 := e.take(t)
	// A second box with the same content: its take reuses no manifest, and
	// writes the same hashes the delete is freeing.
	e.b.Templates = filepath.Dir(e.dir) // the first box's folder is the second's template
	g2, err := e.b.Acquire(e.ctx, providers.BoxSpec{Box: providers.BoxIdentity{ID: "bxsecond"}, Template: filepath.Base(e.dir)})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- e.b.DeleteSnapshot(e.ctx, r1, nil) }()
	t2, err := e.b.Snapshot(e.ctx, g2, providers.SnapshotTake{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	h, ok := e.held(t, t2.Ref)
	if !ok || h.Incomplete {
		t.Fatalf("the take made during a delete is %+v: %s", h, h.Error)
	}
}

func TestForkIsCleanedOfItsSourcesIdentity(t *testing.T) {
	t.Parallel()
	e := setup(t)
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, ".netrc"), []byte("machine x password y"), 0o600)
	for _, f := range []string{
		".boxsnap/env", ".ssh/id_ed25519", ".git-credentials", ".aws/credentials",
		"root/.claude/.credentials.json", "home/alice/.netrc", "home/alice/.config/gh/hosts.yml",
		"home/alice/.kube/config", "home/alice/.config/gcloud/credentials.db",
	} {
		e.write(t, f, "secret")
	}
	e.write(t, "home/alice/project/main.go", "package main")
	e.write(t, ".config/app.toml", "kept")
	os.Symlink(outside, filepath.Join(e.dir, "home", "bob"))
	taken, ref := e.take(t)
	if taken.ResetVersion != IdentityResetVersion {
		t.Fatalf("the take read reset version %d", taken.ResetVersion)
	}
	fg, err := e.b.ForkSnapshot(e.ctx, ref, providers.BoxIdentity{ID: "bxfork", Kind: "linux"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	fdir := e.b.BoxDir(fg)
	for _, gone := range []string{".boxsnap/env", ".ssh", ".git-credentials", ".aws/credentials",
		"root/.claude/.credentials.json", "home/alice/.netrc", "home/alice/.config/gh/hosts.yml",
		"home/alice/.kube/config", "home/alice/.config/gcloud"} {
		if _, err := os.Lstat(filepath.Join(fdir, gone)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("the fork still holds %s", gone)
		}
	}
	for _, kept := range []string{"home/alice/project/main.go", ".config/app.toml"} {
		if _, err := os.Stat(filepath.Join(fdir, kept)); err != nil {
			t.Errorf("the fork lost %s: %v", kept, err)
		}
	}
	if _, err := os.Stat(filepath.Join(outside, ".netrc")); err != nil {
		t.Fatal("the fork's clean-up followed a link out of the box")
	}
	data, _ := os.ReadFile(filepath.Join(fdir, confined.IdentityFile))
	if !strings.Contains(string(data), `"box":"bxfork"`) {
		t.Fatalf("the fork's identity marker is %s", data)
	}
	// The source is untouched.
	if e.read(t, ".boxsnap/env") != "secret" {
		t.Fatal("the fork changed its source")
	}

	// A snapshot taken with no identity reset is never forked.
	os.Remove(filepath.Join(e.dir, confined.IdentityFile))
	taken, ref = e.take(t)
	if taken.ResetVersion != 0 {
		t.Fatalf("a box with no marker gave reset version %d", taken.ResetVersion)
	}
	_, err = e.b.ForkSnapshot(e.ctx, ref, providers.BoxIdentity{ID: "bxfork2"}, nil)
	var re *providers.RefusedError
	if !errors.As(err, &re) || re.Why != providers.NoResetWords(e.g.Ref) {
		t.Fatalf("forking a snapshot with no identity reset answered %v", err)
	}
	plan, err := e.b.PlanSnapshots(e.ctx, e.g, &ref)
	if err != nil || plan.Fork.OK {
		t.Fatalf("the plan offers to fork a snapshot with no identity reset: %+v %v", plan.Fork, err)
	}
}

func TestBrowseDownloadAndCompare(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.write(t, "docs/a.txt", "one\ntwo\nthree\nfour\nfive\n")
	e.write(t, "docs/bin.dat", "x\x00y")
	os.Symlink("/etc", filepath.Join(e.dir, "etc-link"))
	_, r1 := e.take(t)
	e.write(t, "docs/a.txt", "one\ntwo\nTHREE\nfour\nfive\nsix\n")
	_, r2 := e.take(t)
	e.write(t, "docs/a.txt", "one\n")

	list, err := e.b.ListFiles(e.ctx, r1, "docs")
	if err != nil || len(list) != 2 || list[0].Path != "docs/a.txt" || list[0].Type != "file" {
		t.Fatalf("ListFiles(docs) = %+v, %v", list, err)
	}
	top, _ := e.b.ListFiles(e.ctx, r1, "")
	var link providers.FileEntry
	for _, f := range top {
		if f.Path == "etc-link" {
			link = f
		}
	}
	for _, f := range top {
		if f.Path == ".boxsnap" {
			t.Fatal("boxsnap's own folder, with the box's access file, is listed")
		}
	}
	if link.Type != "link" || link.Target != "/etc" {
		t.Fatalf("the link is listed as %+v", link)
	}
	var buf bytes.Buffer
	if _, err := e.b.ReadFile(e.ctx, r1, "docs/a.txt", &buf); err != nil || buf.String() != "one\ntwo\nthree\nfour\nfive\n" {
		t.Fatalf("ReadFile = %q, %v", buf.String(), err)
	}
	var re *providers.RefusedError
	for _, bad := range []string{"../outside", "docs/../../x", "etc-link/passwd", ".boxsnap/env", ".boxsnap"} {
		if _, err := e.b.ReadFile(e.ctx, r1, bad, io.Discard); !errors.As(err, &re) {
			t.Errorf("ReadFile(%q) answered %v, want a refusal", bad, err)
		}
	}
	d, err := e.b.DiffFile(e.ctx, r1, &r2, "docs/a.txt")
	want := "--- a/docs/a.txt\n+++ b/docs/a.txt\n@@ -1,5 +1,6 @@\n one\n two\n-three\n+THREE\n four\n five\n+six\n"
	if err != nil || d != want {
		t.Fatalf("DiffFile between snapshots =\n%s\n%v\nwant\n%s", d, err, want)
	}
	d, err = e.b.DiffFile(e.ctx, r2, nil, "docs/a.txt")
	want = "--- a/docs/a.txt\n+++ b/docs/a.txt\n@@ -1,6 +1 @@\n one\n-two\n-THREE\n-four\n-five\n-six\n"
	if err != nil || d != want {
		t.Fatalf("DiffFile with now =\n%s\n%v\nwant\n%s", d, err, want)
	}
	if _, err := e.b.DiffFile(e.ctx, r1, nil, "docs/bin.dat"); !errors.As(err, &re) {
		t.Fatalf("comparing a binary file answered %v", err)
	}
	e.write(t, "big.txt", strings.Repeat("a\n", providers.MaxDiffBytes/2+1))
	_, r3 := e.take(t)
	if _, err := e.b.DiffFile(e.ctx, r3, nil, "big.txt"); !errors.As(err, &re) {
		t.Fatalf("comparing a file over 512 KiB answered %v", err)
	}
	// The box's side goes through no link either.
	os.RemoveAll(filepath.Join(e.dir, "docs"))
	os.Symlink(t.TempDir(), filepath.Join(e.dir, "docs"))
	if _, err := e.b.DiffFile(e.ctx, r1, nil, "docs/a.txt"); !errors.As(err, &re) {
		t.Fatalf("comparing through a link in the box answered %v", err)
	}
}

func TestExportAndImportABatchInAnyOrder(t *testing.T) {
	t.Parallel()
	src := setup(t)
	src.write(t, "a.txt", "version one")
	src.write(t, "big.txt", strings.Repeat("unchanged ", 1000))
	_, r1 := src.take(t)
	src.write(t, "a.txt", "version two")
	t2, r2 := src.take(t)
	if t2.Parent != r1.Ref {
		t.Fatalf("the second take's parent is %q, want %q", t2.Parent, r1.Ref)
	}
	var full, incr bytes.Buffer
	if err := src.b.ExportSnapshot(src.ctx, r1, providers.ExportOptions{Name: "cp01"}, &full); err != nil {
		t.Fatal(err)
	}
	if err := src.b.ExportSnapshot(src.ctx, r2, providers.ExportOptions{Name: "cp02", Base: &r1}, &incr); err != nil {
		t.Fatal(err)
	}
	if incr.Len() >= full.Len() {
		t.Fatalf("the incremental archive (%d bytes) is not smaller than the full one (%d)", incr.Len(), full.Len())
	}

	dst := setup(t)
	// The incremental one alone lacks its base's content: refused, nothing published.
	_, err := dst.b.ImportSnapshots(dst.ctx, providers.ImportOptions{Group: "received"}, []io.Reader{bytes.NewReader(incr.Bytes())})
	var re *providers.RefusedError
	if !errors.As(err, &re) || !strings.Contains(re.Why, "neither the batch nor this store") {
		t.Fatalf("importing an incremental archive without its base answered %v", err)
	}
	if list, _ := dst.b.HeldSnapshots(dst.ctx); len(list) != 0 {
		t.Fatalf("a refused import published %d snapshots", len(list))
	}
	// In any order: the newer first.
	got, err := dst.b.ImportSnapshots(dst.ctx, providers.ImportOptions{Group: "received"},
		[]io.Reader{bytes.NewReader(incr.Bytes()), bytes.NewReader(full.Bytes())})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Ref.ID != r2.Ref || got[0].Parent != r1.Ref || got[1].Parent != "" {
		t.Fatalf("imported %+v", got)
	}
	h, ok := dst.held(t, r2.Ref)
	if !ok || h.Incomplete || h.Parent != r1.Ref || h.Label.Box != "received" || h.Label.Install != "in-test" {
		t.Fatalf("the imported snapshot is listed as %+v", h)
	}
	// It forks whole.
	fg, err := dst.b.ForkSnapshot(dst.ctx, h.Ref, providers.BoxIdentity{ID: "bxfromimport"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(filepath.Join(dst.b.BoxDir(fg), "a.txt")); string(data) != "version two" {
		t.Fatalf("the fork of the import holds %q", data)
	}
	// The same again is installed once.
	again, err := dst.b.ImportSnapshots(dst.ctx, providers.ImportOptions{Group: "received"}, []io.Reader{bytes.NewReader(full.Bytes())})
	if err != nil || len(again) != 1 || !again[0].Already {
		t.Fatalf("importing the same snapshot again = %+v, %v", again, err)
	}
	// A name already used by another member is refused.
	src.write(t, "a.txt", "version three")
	_, r3 := src.take(t)
	var third bytes.Buffer
	src.b.ExportSnapshot(src.ctx, r3, providers.ExportOptions{Name: "cp01"}, &third)
	_, err = dst.b.ImportSnapshots(dst.ctx, providers.ImportOptions{Group: "received"}, []io.Reader{bytes.NewReader(third.Bytes())})
	if !errors.As(err, &re) || !strings.Contains(re.Why, `The name "cp01" is already used`) {
		t.Fatalf("importing a conflicting name answered %v", err)
	}
	// A damaged archive is refused.
	bad := append([]byte(nil), full.Bytes()...)
	bad[len(bad)/2] ^= 0xff
	if _, err := setup(t).b.ImportSnapshots(t.Context(), providers.ImportOptions{Group: "g"}, []io.Reader{bytes.NewReader(bad)}); !errors.As(err, &re) {
		t.Fatalf("importing a damaged archive answered %v", err)
	}
}

func TestASnapshotOfAnotherBoxIsNeverRestoredOverThisOne(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.write(t, "a.txt", "a")
	_, ref := e.take(t)
	g2, err := e.b.Acquire(e.ctx, providers.BoxSpec{Box: providers.BoxIdentity{ID: "bxother"}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.b.RestoreSnapshot(e.ctx, g2, ref, providers.StepRollback, nil)
	var re *providers.RefusedError
	if !errors.As(err, &re) || !strings.Contains(re.Why, "fork it instead") {
		t.Fatalf("restoring another box's snapshot answered %v", err)
	}
	plan, err := e.b.PlanSnapshots(e.ctx, g2, &ref)
	if err != nil || plan.Restore.Way != providers.WayNone {
		t.Fatalf("the plan for another box's snapshot is %+v, %v", plan.Restore, err)
	}
}

func TestLabelsSurviveALostDatabase(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.write(t, "a.txt", "a")
	_, err := e.b.Snapshot(e.ctx, e.g, providers.SnapshotTake{Label: providers.Label{Install: "in-test", Box: e.g.Ref, Snapshot: "sn7kq2m9xa4pd"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	until := time.Date(2027, 1, 31, 23, 59, 59, 0, time.UTC)
	if err := e.b.SetKeptUntil(e.ctx, providers.SnapshotRef{Ref: "sn7kq2m9xa4pd"}, &until); err != nil {
		t.Fatal(err)
	}
	// A new backend over the same root, as after a restart with no records.
	b2, err := New(Config{Root: e.b.Root(), Install: "in-test"})
	if err != nil {
		t.Fatal(err)
	}
	list, err := b2.HeldSnapshots(e.ctx)
	if err != nil || len(list) != 1 {
		t.Fatalf("HeldSnapshots = %+v, %v", list, err)
	}
	l := list[0].Label
	if l.Snapshot != "sn7kq2m9xa4pd" || l.Box != e.g.Ref || l.KeptUntil == nil || !l.KeptUntil.Equal(until) || l.ResetVersion != IdentityResetVersion {
		t.Fatalf("the label read back is %+v", l)
	}
	raw, _ := os.ReadFile(filepath.Join(e.b.SnapDir("sn7kq2m9xa4pd"), store.FileLabel))
	if strings.Contains(string(raw), "a.txt") {
		t.Fatal("the label holds more than IDs and dates")
	}
	// Another install's snapshots are not listed.
	b3, _ := New(Config{Root: e.b.Root(), Install: "another"})
	if list, _ := b3.HeldSnapshots(e.ctx); len(list) != 0 {
		t.Fatalf("another install lists %d snapshots", len(list))
	}
}

func TestPlanFillsStorageAndTheTakesEstimate(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.write(t, "a.txt", strings.Repeat("a", 5000))
	plan, err := e.b.PlanSnapshots(e.ctx, e.g, nil)
	if err != nil {
		t.Fatal(err)
	}
	if plan.Storage.Type == "" || plan.Storage.PercentFull <= 0 || plan.Storage.FreeBytes <= 0 {
		t.Fatalf("storage = %+v", plan.Storage)
	}
	if plan.Take.AddsBytes == nil || *plan.Take.AddsBytes < 5000 {
		t.Fatalf("a first take adds %v bytes, want at least the 5000 in the box", plan.Take.AddsBytes)
	}
	_, ref := e.take(t)
	plan, _ = e.b.PlanSnapshots(e.ctx, e.g, &ref)
	if *plan.Take.AddsBytes != 0 {
		t.Fatalf("with nothing changed the take adds %d bytes", *plan.Take.AddsBytes)
	}
	if plan.Restore.Way != providers.WayRollback || plan.Restore.Undo != providers.UndoSnapshot || plan.Restore.SizeBack == nil {
		t.Fatalf("restore plan = %+v", plan.Restore)
	}
	wantOrder := []providers.RestoreStep{providers.StepUndo, providers.StepStop, providers.StepRollback, providers.StepStart, providers.StepReadSize}
	if fmt.Sprint(plan.Restore.Order) != fmt.Sprint(wantOrder) {
		t.Fatalf("order = %v, want %v", plan.Restore.Order, wantOrder)
	}
}

func TestUnifiedDiffOfLongTexts(t *testing.T) {
	t.Parallel()
	var a, b []string
	for i := 0; i < 100; i++ {
		a = append(a, fmt.Sprintf("line %d\n", i))
		if i == 10 || i == 60 {
			b = append(b, "changed\n")
			continue
		}
		b = append(b, fmt.Sprintf("line %d\n", i))
	}
	d := providers.UnifiedDiff("a/x", "b/x", strings.Join(a, ""), strings.Join(b, ""))
	if strings.Count(d, "@@ -") != 2 || !strings.Contains(d, "@@ -8,7 +8,7 @@\n line 7\n line 8\n line 9\n-line 10\n+changed\n") {
		t.Fatalf("diff =\n%s", d)
	}
	if providers.UnifiedDiff("a", "b", "same\n", "same\n") != "" {
		t.Fatal("equal texts gave a diff")
	}
}

func runCmd(name string, args ...string) (string, error) {
	out, err := exec.Command(name, args...).CombinedOutput()
	return string(out), err
}

// runtimeGosched yields while a test polls a condition with a deadline.
func runtimeGosched() { runtime.Gosched() }

// groupLives says whether a process of the group lives (zombies aside).
func groupLives(pgid int) bool {
	procs, _ := os.ReadDir("/proc")
	for _, p := range procs {
		data, err := os.ReadFile("/proc/" + p.Name() + "/stat")
		if err != nil {
			continue
		}
		i := strings.LastIndexByte(string(data), ')')
		fields := strings.Fields(string(data[i+2:]))
		if len(fields) >= 3 && fields[2] == fmt.Sprint(pgid) && fields[0] != "Z" {
			return true
		}
	}
	return false
}

// unmountAtEnd unmounts, at the test's end, the file systems of its own
// that each box of b got (package disks), so its temporary folder can be removed.
func unmountAtEnd(t testing.TB, b *Backend) {
	t.Helper()
	t.Cleanup(func() {
		if err := UnmountAll(b.Root()); err != nil {
			t.Errorf("unmount the boxes' file systems: %v", err)
		}
	})
}
