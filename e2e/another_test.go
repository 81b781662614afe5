package e2e

import (
	"context"
	"crypto/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/boxsnap/boxsnap/app/coretest"
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
	h, onA, onB, conn := twoHostsOnABucket(ctx, t)

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
	want := coretest.TreeOf(t, dirA)
	takeNamed(ctx, t, onA, "one")
	var snap string
	if err := conn.QueryRow(ctx, "SELECT id FROM snapshots WHERE box_id = $1 AND name = 'one' AND state = 'ready'", amber).Scan(&snap); err != nil {
		t.Fatalf("amber-fox's snapshot one: %v", err)
	}
	// host-a's box moves on; host-b must bring back the snapshot's tree.
	if err := os.WriteFile(filepath.Join(dirA, "notes.txt"), []byte("changed on host-a after the take"), 0o644); err != nil {
		t.Fatal(err)
	}
	if n := coretest.FilesUnder(t, filepath.Join(h.dataDir("host-b"), "local", "content")); n != 0 {
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
	coretest.SameTree(t, "amber-fox restored on host-b", want, coretest.TreeOf(t, h.boxDir("host-b", amber)))

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
	coretest.SameTree(t, "the fork on host-b", want, coretest.TreeOf(t, h.boxDir("host-b", fork)))
}

// twoHostsOnABucket starts the built binary as two hosts, host-a and
// host-b, each a serve with its workers and a data folder of its own, on
// one database and one versitygw bucket; it answers the hosts, each one's
// API as the person, and a connection to the database, closed with the
// test.
func twoHostsOnABucket(ctx context.Context, t *testing.T) (*binHosts, *soakHTTP, *soakHTTP, *pgx.Conn) {
	t.Helper()
	srv := s3test.Start(t)
	h := newBinHosts(t)
	if err := local.Passable(h.root, os.TempDir()); err != nil {
		t.Fatal(err)
	}
	env := bucketEnv(srv.Bucket(t))
	_, baseA := h.start("host-a", env, "serve")
	_, baseB := h.start("host-b", env, "serve")
	tok, err := personToken(ctx, baseA, Password)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, strings.TrimSuffix(h.dsn, " pool_max_conns=12"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.WithoutCancel(ctx)) })
	return h, newSoakHTTP(baseA, tok), newSoakHTTP(baseB, tok), conn
}
