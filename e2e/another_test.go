package e2e

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/boxsnap/boxsnap/providers/local"
	"github.com/boxsnap/boxsnap/providers/local/objstore/s3test"
)

// TestRestoreOnAnotherHost runs the built binary as two hosts, each a
// serve with its workers and a data folder of its own, on one database
// and one versitygw bucket. A box's tree taken on host-a (small files, a
// folder three deep, a 9 MiB file that ships as chunks, an empty file, a
// link, an executable's mode) is restored on host-b, whose cache is
// empty, so every object is fetched from the bucket and checked: the box
// is moved there. Then the snapshot host-a took is forked on host-b. The
// moved box and the fork each hold the tree as it was at the take,
// byte-exact, with its modes and link, not what host-a's box changed
// after the take.
func TestRestoreOnAnotherHost(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	srv := s3test.Start(t)
	bucket := srv.Bucket(t)
	h := newBinHosts(t)
	if err := local.Passable(h.root, os.TempDir()); err != nil {
		t.Fatal(err)
	}
	env := bucketEnv(bucket)
	_, baseA := h.start("host-a", env, "serve")
	_, baseB := h.start("host-b", env, "serve")
	tok, err := personToken(ctx, baseA, Password)
	if err != nil {
		t.Fatal(err)
	}
	onA, onB := newSoakHTTP(baseA, tok), newSoakHTTP(baseB, tok)
	conn, err := pgx.Connect(ctx, strings.TrimSuffix(h.dsn, " pool_max_conns=12"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)

	amber := makeBox(ctx, t, onA, "amber-fox")
	dirA := h.boxDir("host-a", amber)
	big := make([]byte, 9<<20)
	if _, err := rand.Read(big); err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string][]byte{
		"notes.txt": []byte("on host-a"), "src/main.go": []byte("package main\n"), "src/deep/er/x.txt": []byte("x"),
		"big.bin": big, "empty": nil,
	} {
		p := filepath.Join(dirA, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, content, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(filepath.Join(dirA, "src/main.go"), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("src/main.go", filepath.Join(dirA, "link")); err != nil {
		t.Fatal(err)
	}
	want := treeOf(t, dirA)
	takeNamed(ctx, t, onA, "one")
	var snap string
	if err := conn.QueryRow(ctx, "SELECT id FROM snapshots WHERE box_id = $1 AND name = 'one' AND state = 'ready'", amber).Scan(&snap); err != nil {
		t.Fatalf("amber-fox's snapshot one: %v", err)
	}
	// host-a's box moves on; host-b must bring back the snapshot's tree.
	if err := os.WriteFile(filepath.Join(dirA, "notes.txt"), []byte("changed on host-a after the take"), 0o644); err != nil {
		t.Fatal(err)
	}
	if n := filesIn(t, filepath.Join(h.dataDir("host-b"), "local", "content")); n != 0 {
		t.Fatalf("host-b's cache holds %d files before the move; want none", n)
	}

	var op struct {
		Operation struct {
			ID string `json:"id"`
		} `json:"operation"`
	}
	if err := onB.do(ctx, "POST", "/api/v1/boxes/amber-fox/move", map[string]string{"host": "host-b"}, &op); err != nil {
		t.Fatalf("move amber-fox to host-b: %v", err)
	}
	if state := waitEnded(ctx, t, onB, op.Operation.ID); state != "done" {
		t.Fatalf("the move ended %s", state)
	}
	sameTree(t, "amber-fox restored on host-b", want, treeOf(t, h.boxDir("host-b", amber)))

	if err := onB.do(ctx, "POST", "/api/v1/boxes/amber-fox/snapshots/"+snap+"/fork", map[string]string{"name": "forked-on-b"}, &op); err != nil {
		t.Fatalf("fork amber-fox's snapshot on host-b: %v", err)
	}
	if state := waitEnded(ctx, t, onB, op.Operation.ID); state != "done" {
		t.Fatalf("the fork on host-b ended %s", state)
	}
	var fork string
	var owner *string
	if err := conn.QueryRow(ctx, "SELECT id, owner_host FROM boxes WHERE name = 'forked-on-b'").Scan(&fork, &owner); err != nil {
		t.Fatal(err)
	}
	if owner == nil || *owner != "host-b" {
		t.Fatalf("the fork made on host-b is owned by %v", owner)
	}
	sameTree(t, "the fork on host-b", want, treeOf(t, h.boxDir("host-b", fork)))
}

// treeOf is every path under dir but the box's own .boxsnap folder, each
// with its type, mode and content's hash, or its link's target.
func treeOf(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if rel == "." {
			return nil
		}
		if rel == ".boxsnap" {
			return fs.SkipDir
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		v := fi.Mode().String()
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			v += " -> " + target
		case fi.Mode().IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			v += fmt.Sprintf(" %d %x", len(data), sha256.Sum256(data))
		}
		out[rel] = v
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// sameTree fails the test unless got is want, path for path.
func sameTree(t *testing.T, what string, want, got map[string]string) {
	t.Helper()
	for p, v := range want {
		if got[p] != v {
			t.Errorf("%s: %s is %q, want %q", what, p, got[p], v)
		}
	}
	for p, v := range got {
		if _, ok := want[p]; !ok {
			t.Errorf("%s holds %s (%s), which the snapshot does not", what, p, v)
		}
	}
}

// filesIn counts the files under dir; none when it is not there.
func filesIn(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
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
