package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/wire"
	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/local"
)

// fillingForks is the real local backend whose second fork starts on a
// host disk filled to the last block: what a disk that fills while a fork
// into many runs leaves. Every other method is the backend's own.
type fillingForks struct {
	*local.Backend
	calls atomic.Int32
	once  sync.Once
	fill  func()
}

func (f *fillingForks) ForkSnapshot(ctx context.Context, ref providers.SnapshotRef, box providers.BoxIdentity, rec providers.Recorder) (providers.Guest, error) {
	if f.calls.Add(1) == 2 {
		f.once.Do(f.fill)
	}
	return f.Backend.ForkSnapshot(ctx, ref, box, rec)
}

// freeBytes is what the file system at path has free for anyone.
func freeBytes(t *testing.T, path string) int64 {
	t.Helper()
	var fs syscall.Statfs_t
	if err := syscall.Statfs(path, &fs); err != nil {
		t.Fatal(err)
	}
	return int64(fs.Bavail) * fs.Bsize
}

// TestForkManyOnAFillingDisk: a fork into three whose host disk fills
// part-way (full to the last block as the second fork starts) leaves each
// fork whole or absent, and its own result says which: the first is made
// and reads its snapshot's file; the others failed, each saying the disk
// ran out of room (never the data folder's paths), with
// no box, no folder, no disk image and no mount left of them; once the
// filler goes, the host has back all the room it had before the failed
// forks started.
func TestForkManyOnAFillingDisk(t *testing.T) {
	t.Parallel()
	host := smallDisk(t, 768<<20)
	root := filepath.Join(host, "local")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	filler := filepath.Join(host, "filler")
	// Written by the fork's job as the second fork starts, read once the
	// forks have ended.
	var filled sync.Mutex
	var roomBefore int64
	var fillErr error
	var wrapped *fillingForks
	e := setupWith(t, coretest.Options{LocalRoot: root, DiskBytes: 256 << 20, Wrap: func(b snapshots.Backend) snapshots.Backend {
		lb, ok := b.Snap.(*local.Backend)
		if !ok {
			t.Fatalf("the local backend is a %T", b.Snap)
		}
		wrapped = &fillingForks{Backend: lb}
		b.Snap = wrapped
		return b
	}})
	if exact, why, _ := e.Local.DiskBounding(); !exact {
		if os.Getenv("CI") == "true" {
			t.Fatal("a box cannot be a file system of its own here: " + why)
		}
		t.Skip("a box cannot be a file system of its own here: " + why)
	}
	wrapped.fill = func() {
		filled.Lock()
		defer filled.Unlock()
		var fs syscall.Statfs_t
		if err := syscall.Statfs(host, &fs); err == nil {
			roomBefore = int64(fs.Bavail) * fs.Bsize
		}
		fillErr = fill(filler)
	}
	token, agent := e.agent(t, "Fork on a filling disk")
	src := e.Box(t, agent, "amber-fox")
	if err := os.WriteFile(filepath.Join(e.Local.BoxDir(providers.Guest{Ref: src.GuestRef}), "notes.txt"), []byte("at the take"), 0o644); err != nil {
		t.Fatal(err)
	}
	sn := e.TakeReady(t, agent, "amber-fox", "one")

	a := e.call(t, "POST", "/boxes/amber-fox/snapshots/"+sn.ID+"/fork?wait=true", token, map[string]any{"name": "fix", "count": 3}).must(t, 200)
	filled.Lock()
	defer filled.Unlock()
	if fillErr != nil || roomBefore == 0 {
		t.Fatalf("the disk was not filled as the second fork started: %v", fillErr)
	}
	var ans wire.ForkManyAnswer
	if err := json.Unmarshal(a.Raw, &ans); err != nil {
		t.Fatal(err)
	}
	if len(ans.Forks) != 3 {
		t.Fatalf("a fork into three answered %s", a.Raw)
	}
	var made, failed []string
	for _, f := range ans.Forks {
		got := e.call(t, "GET", "/boxes/"+f.Name, token, nil)
		switch f.State {
		case snapshots.OpDone:
			made = append(made, f.Name)
			got.must(t, 200)
			if f.Box == "" || got.str("id") != f.Box || !strings.HasPrefix(f.Message, "Made "+f.Name+", forked from amber-fox") {
				t.Errorf("%s is done: %+v, its box %s", f.Name, f, got.Raw)
			}
			notes, err := os.ReadFile(filepath.Join(e.Local.BoxDir(providers.Guest{Ref: got.str("guestRef")}), "notes.txt"))
			if err != nil || string(notes) != "at the take" {
				t.Errorf("%s, made, holds notes.txt %q (%v)", f.Name, notes, err)
			}
		case snapshots.OpFailed:
			failed = append(failed, f.Name)
			if f.Box != "" || got.Status != 404 ||
				f.Message != "The fork did not finish: The disk ran out of room while the fork was made (no space left on device): nothing of it was kept. Make room on the host, then fork again." {
				t.Errorf("%s failed: %+v, and GET answers %d %s", f.Name, f, got.Status, got.Raw)
			}
		default:
			t.Errorf("%s ended %s: %+v", f.Name, f.State, f)
		}
	}
	if len(made) != 1 || made[0] != "fix-1" || len(failed) != 2 {
		t.Fatalf("on a disk full from the second fork on: made %q, failed %q; want fix-1 made and the others failed: %s", made, failed, a.Raw)
	}
	if !strings.Contains(ans.Message, "fix-2: ") || !strings.Contains(ans.Message, "fix-3: ") {
		t.Errorf("the answer's message does not name each failed fork: %q", ans.Message)
	}

	// Nothing of the failed forks is left: each disk image and box folder
	// is a live box's, and no mount names a failed fork's.
	live := map[string]bool{}
	rows, err := e.Pool.Query(context.Background(), `SELECT guest_ref FROM boxes WHERE released_at IS NULL AND guest_ref <> ''`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var ref string
		if err := rows.Scan(&ref); err != nil {
			t.Fatal(err)
		}
		live[ref] = true
	}
	if len(live) != 2 {
		t.Fatalf("live boxes' guests: %v, want amber-fox's and fix-1's", live)
	}
	for _, dir := range []string{"disks", "boxes"} {
		entries, _ := os.ReadDir(filepath.Join(root, dir))
		seen := map[string]bool{}
		for _, d := range entries {
			ref := strings.SplitN(d.Name(), ".", 2)[0]
			seen[ref] = true
			if !live[ref] && d.Name() != "mount.lock" {
				t.Errorf("%s/%s is left of no live box", dir, d.Name())
			}
		}
		for ref := range live {
			if !seen[ref] {
				t.Fatalf("%s holds nothing of the live box %s: this check reads the wrong folder", dir, ref)
			}
		}
	}
	mounts, _ := os.ReadFile("/proc/self/mounts")
	for _, line := range strings.Split(string(mounts), "\n") {
		if f := strings.Fields(line); len(f) > 1 && strings.HasPrefix(f[1], root) {
			ok := false
			for ref := range live {
				ok = ok || strings.Contains(f[1], ref)
			}
			if !ok && !strings.Contains(f[1], "lowers") {
				t.Errorf("a mount is left of no live box: %s", f[1])
			}
		}
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	const slack = 8 << 20
	if after := freeBytes(t, host); after < roomBefore-slack {
		t.Errorf("the failed forks kept %d bytes of the host's room (free %d before them, %d after)", roomBefore-after, roomBefore, after)
	}
}

// fill writes to path until a write fails for want of room; the error is
// any other failure.
func fill(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	chunk := bytes.Repeat([]byte{0x5a}, 1<<20)
	for {
		if _, err := f.Write(chunk); err != nil {
			if errors.Is(err, syscall.ENOSPC) {
				break
			}
			return err
		}
	}
	// The last blocks, smaller than the chunk.
	small := chunk[:4096]
	for {
		if _, err := f.Write(small); err != nil {
			if errors.Is(err, syscall.ENOSPC) {
				return nil
			}
			return err
		}
	}
}
