package e2e

import (
	"context"
	"crypto/rand"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/boxsnap/boxsnap/providers/local/objstore/s3test"
)

// TestBucketFreeingByTheDatabaseThroughTheBinary runs the built binary on one database and
// a real bucket: host-a a web process and a worker, host-b the same once
// the kills are over. A box of 4,000 small files and one large file (that
// ships as chunks) is taken, and host-a's worker is killed (SIGKILL) while
// the take puts its objects in the bucket, once the ledger records the
// first of them there; another worker is started. The take resumes and
// ends done, and its snapshot is ready with its manifest and every object
// it holds in the bucket. Two more takes follow, the middle one is
// deleted, and the worker running the content sweep (its interval
// shortened) is killed while the sweep deletes its objects, once it has
// forgotten and deleted the first; another is started. Every object of
// each ready snapshot is still in the bucket, and after the next sweep
// past the ledger's grace (its clock moved in the database) the bucket
// holds only what a snapshot names. Last, on host-b, the box is moved
// there and each ready snapshot restored, byte-exact. Each wait wakes at
// a commit that changed the ledger (watchLedger), never at a tick.
func TestBucketFreeingByTheDatabaseThroughTheBinary(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	srv := s3test.Start(t)
	bucket := srv.Bucket(t)
	h := newBinHosts(t)
	store := bucketEnv(bucket)
	_, baseA := h.start("host-a", store, "serve", "--workers=false")
	workA, _ := h.start("host-a", store, "work")
	tok, err := personToken(ctx, baseA, Password)
	if err != nil {
		t.Fatal(err)
	}
	onA := newSoakHTTP(baseA, tok)
	amber := makeBox(ctx, t, onA, "amber-fox")
	dirA := h.boxDir("host-a", amber)
	conn, err := pgx.Connect(ctx, strings.TrimSuffix(h.dsn, " pool_max_conns=12"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	watch := watchLedger(ctx, t, h.dsn)
	trees := map[string]string{} // each snapshot's name: a copy of the tree it took

	// The take, killed while it ships.
	trees["first"] = roundOf(t, dirA, "first")
	before := storedObjects(ctx, t, conn)
	take := startTake(ctx, t, onA, "first")
	workA = h.killWhen(ctx, t, watch, workA, "host-a", store, "the ledger records the take's first objects in the bucket", func() bool {
		return storedObjects(ctx, t, conn) > before
	}, func() string {
		var state string
		if err := conn.QueryRow(ctx, "SELECT state FROM operations WHERE id = $1", take).Scan(&state); err != nil {
			t.Fatal(err)
		}
		if state != "running" {
			return "the take ended " + state
		}
		var snap string
		if err := conn.QueryRow(ctx, "SELECT id FROM snapshots WHERE box_id = $1 AND name = 'first'", amber).Scan(&snap); err != nil {
			t.Fatal(err)
		}
		if _, ok := slices.BinarySearch(bucketKeys(ctx, t, srv, bucket.Bucket), "manifests/"+snap); ok {
			return "the take had shipped its manifest"
		}
		return ""
	})
	// A take ships as a step of its own operation, resumed after a kill:
	// failing it would leave a box's newest work in no snapshot.
	if state := waitEnded(ctx, t, onA, take); state != "done" {
		var words *string
		_ = conn.QueryRow(ctx, "SELECT error FROM operations WHERE id = $1", take).Scan(&words)
		if words == nil || strings.TrimSpace(*words) == "" {
			t.Fatalf("the take killed while it shipped ended %s with no words", state)
		}
		t.Fatalf("the take killed while it shipped ended %s, not resumed: %s", state, *words)
	}
	readyInBucket(ctx, t, conn, srv, bucket.Bucket, amber)

	// Two more takes; the middle one deleted, and the sweep killed while it
	// deletes what only that one held.
	trees["second"] = roundOf(t, dirA, "second")
	takeNamed(ctx, t, onA, "second")
	trees["third"] = roundOf(t, dirA, "third")
	takeNamed(ctx, t, onA, "third")
	sweeping := bucketEnv(bucket, "BOXSNAP_CONTENT_SWEEP_INTERVAL=2s")
	workA.stop()
	workA, _ = h.start("host-a", sweeping, "work")
	held := bucketKeys(ctx, t, srv, bucket.Bucket)
	var del struct {
		Operation struct {
			ID string `json:"id"`
		} `json:"operation"`
	}
	if err := onA.do(ctx, "DELETE", "/api/v1/boxes/amber-fox/snapshots/second", nil, &del); err != nil {
		t.Fatalf("delete the second snapshot: %v", err)
	}
	if state := waitEnded(ctx, t, onA, del.Operation.ID); state != "done" {
		t.Fatalf("the delete of the second snapshot ended %s", state)
	}
	delete(trees, "second")
	// No take runs now: every claim, of a take killed or not, is past the
	// grace, so this sweep frees all that nothing names.
	pastGrace(ctx, t, conn)
	named := namedKeys(ctx, t, conn)
	var toFree []string
	for _, k := range held {
		if !slices.Contains(named, k) {
			toFree = append(toFree, k)
		}
	}
	if len(toFree) == 0 {
		t.Fatal("the deleted snapshot left nothing for the sweep to free")
	}
	// The sweep deletes each key in the bucket inside the transaction that
	// forgets its record: a key whose record is gone is gone from the
	// bucket.
	left := func() (n int) {
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM unnest($1::text[]) k
			WHERE EXISTS (SELECT 1 FROM content_objects o WHERE o.key = k) OR EXISTS (SELECT 1 FROM content_packs p WHERE p.key = k)`, toFree).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := left(); n != len(toFree) {
		t.Fatalf("the ledger records %d of the %d keys the sweep is to free; want all", n, len(toFree))
	}
	workA = h.killWhen(ctx, t, watch, workA, "host-a", sweeping, "the sweep forgets and deletes its first keys", func() bool {
		return left() < len(toFree)
	}, func() string {
		if n := left(); n == 0 {
			return "the sweep had deleted all it frees"
		}
		return ""
	})
	readyInBucket(ctx, t, conn, srv, bucket.Bucket, amber)
	// After the next sweeps past the grace (a repack keeps an old pack
	// that long), nothing is left that nothing names. Each look follows a
	// commit that changed the ledger: a sweep's, or pastGrace's own.
	var got []string
	if !watch.until(ctx, 3*time.Minute, func() bool {
		pastGrace(ctx, t, conn)
		named, got = namedKeys(ctx, t, conn), bucketKeys(ctx, t, srv, bucket.Bucket)
		return slices.Equal(named, got)
	}) {
		var extra, missing []string
		for _, k := range got {
			if !slices.Contains(named, k) {
				extra = append(extra, k)
			}
		}
		for _, k := range named {
			if !slices.Contains(got, k) {
				missing = append(missing, k)
			}
		}
		t.Fatalf("3 minutes after the sweep's kill the bucket holds %d keys nothing names (%.5q) and lacks %d named ones (%.5q)",
			len(extra), extra, len(missing), missing)
	}
	readyInBucket(ctx, t, conn, srv, bucket.Bucket, amber)
	t.Logf("the sweep freed %d keys; the bucket holds %d, each named", len(toFree), len(got))

	// Each ready snapshot on another host, from the bucket alone.
	workA.stop()
	_, baseB := h.start("host-b", store, "serve", "--workers=false")
	h.start("host-b", store, "work")
	onB := newSoakHTTP(baseB, tok)
	var op struct {
		Operation struct {
			ID string `json:"id"`
		} `json:"operation"`
	}
	if err := onB.do(ctx, "POST", "/api/v1/boxes/amber-fox/move", map[string]string{"host": "host-b"}, &op); err != nil {
		t.Fatalf("move amber-fox to host-b: %v", err)
	}
	if state := waitEnded(ctx, t, onB, op.Operation.ID); state != "done" {
		t.Fatalf("the move to host-b ended %s", state)
	}
	dirB := h.boxDir("host-b", amber)
	sameFiles(t, trees["third"], dirB)
	for name, tree := range trees {
		if err := onB.do(ctx, "POST", "/api/v1/boxes/amber-fox/snapshots/"+name+"/restore", map[string]any{"replace": true}, &op); err != nil {
			t.Fatalf("restore %s on host-b: %v", name, err)
		}
		if state := waitEnded(ctx, t, onB, op.Operation.ID); state != "done" {
			t.Fatalf("the restore of %s on host-b ended %s", name, state)
		}
		sameFiles(t, tree, dirB)
	}
}

// roundOf writes round's files into the box's folder dir (writeMany's,
// and a large file of random bytes, which ships as chunks) and answers a
// copy of the folder as it is then.
func roundOf(t *testing.T, dir, round string) string {
	t.Helper()
	writeMany(t, dir, round)
	big := make([]byte, 64<<20)
	_, _ = rand.Read(big)
	if err := os.WriteFile(filepath.Join(dir, "big.bin"), big, 0o644); err != nil {
		t.Fatal(err)
	}
	copied := filepath.Join(t.TempDir(), round)
	if out, err := exec.Command("cp", "-a", dir, copied).CombinedOutput(); err != nil {
		t.Fatalf("copy %s: %v %s", dir, err, out)
	}
	return copied
}

// startTake asks for a take of amber-fox named name and answers its
// operation, not waiting for it.
func startTake(ctx context.Context, t *testing.T, api *soakHTTP, name string) string {
	t.Helper()
	var op struct {
		Operation struct {
			ID string `json:"id"`
		} `json:"operation"`
	}
	if err := api.do(ctx, "POST", "/api/v1/boxes/amber-fox/snapshots", map[string]string{"name": name}, &op); err != nil {
		t.Fatalf("take %s: %v", name, err)
	}
	return op.Operation.ID
}

// takeNamed takes amber-fox named name and waits for it to be done.
func takeNamed(ctx context.Context, t *testing.T, api *soakHTTP, name string) {
	t.Helper()
	if state := waitEnded(ctx, t, api, startTake(ctx, t, api, name)); state != "done" {
		t.Fatalf("the take %s ended %s", name, state)
	}
}

// killWhen stops (SIGSTOP) the worker w of host once when answers true,
// asked at first and again at each commit that changes the ledger (watch),
// then asks missed whether what was to be killed had ended already (its
// words fail the test: the kill missed it), kills the worker (SIGKILL, as
// a crash) and starts another on that host with the settings env, which it
// answers.
func (h *binHosts) killWhen(ctx context.Context, t *testing.T, watch *rowWatch, w *soakProc, host string, env []string, what string, when func() bool, missed func() string) *soakProc {
	t.Helper()
	if !watch.until(ctx, 3*time.Minute, when) {
		t.Fatalf("%s not within 3 minutes", what)
	}
	_ = syscall.Kill(w.pid(), syscall.SIGSTOP)
	if words := missed(); words != "" {
		t.Fatalf("%s before %s's worker was stopped: the kill missed it", words, host)
	}
	t.Logf("%s's worker killed once %s", host, what)
	w.kill()
	next, _ := h.start(host, env, "work")
	return next
}

// watchLedger watches the content store's ledger, the records of its
// objects and packs (watchRows), so a wait on the ledger wakes at the
// commit that changed it, never at a tick.
func watchLedger(ctx context.Context, t *testing.T, dsn string) *rowWatch {
	t.Helper()
	return watchRows(ctx, t, dsn, "e2e_ledger", "content_objects", "content_packs")
}

// storedObjects counts the objects the ledger records in the bucket.
func storedObjects(ctx context.Context, t *testing.T, conn *pgx.Conn) (n int) {
	t.Helper()
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM content_objects WHERE stored").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// pastGrace moves the ledger's claims, of objects and packs, into the
// past, as if the grace had run out.
func pastGrace(ctx context.Context, t *testing.T, conn *pgx.Conn) {
	t.Helper()
	for _, table := range []string{"content_objects", "content_packs"} {
		if _, err := conn.Exec(ctx, "UPDATE "+table+" SET claimed_until = now() - interval '1 second' WHERE claimed_until > now()"); err != nil {
			t.Fatal(err)
		}
	}
}

// namedKeys is the bucket's keys the ledger says a snapshot names: each
// named object's own, or its pack's; sorted.
func namedKeys(ctx context.Context, t *testing.T, conn *pgx.Conn) []string {
	t.Helper()
	rows, err := conn.Query(ctx, `SELECT DISTINCT coalesce(o.pack, o.key) FROM content_objects o
		WHERE EXISTS (SELECT 1 FROM content_names n WHERE n.key = o.key)`)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(keys)
	return keys
}

// readyInBucket checks that each ready snapshot of box has its manifest
// and every object it holds (named by it or by a snapshot it is recorded
// over, less what it drops) in the bucket, itself or in its pack.
func readyInBucket(ctx context.Context, t *testing.T, conn *pgx.Conn, srv *s3test.Server, bucket, box string) {
	t.Helper()
	rows, err := conn.Query(ctx, "SELECT name, ref FROM snapshots WHERE box_id = $1 AND state = 'ready'", box)
	if err != nil {
		t.Fatal(err)
	}
	type snap struct{ name, ref string }
	ready, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (snap, error) {
		var s snap
		return s, r.Scan(&s.name, &s.ref)
	})
	if err != nil {
		t.Fatal(err)
	}
	keys := bucketKeys(ctx, t, srv, bucket)
	for _, s := range ready {
		rows, err := conn.Query(ctx, `WITH RECURSIVE chain (holder, depth) AS (
				SELECT $1::text, 0
				UNION ALL
				SELECT s.base_id, c.depth + 1 FROM chain c JOIN content_snapshots s ON s.snapshot_id = c.holder
				WHERE s.base_id IS NOT NULL)
			SELECT coalesce(o.pack, o.key) FROM chain c
			JOIN content_names n ON n.snapshot_id = c.holder
			JOIN content_objects o ON o.key = n.key
			WHERE NOT EXISTS (SELECT 1 FROM chain c2 JOIN content_drops d ON d.snapshot_id = c2.holder AND d.key = n.key
			                  WHERE c2.depth < c.depth)`, s.ref)
		if err != nil {
			t.Fatal(err)
		}
		holds, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		manifest := "manifests/" + s.ref
		if !slices.Contains(holds, manifest) {
			t.Errorf("ready snapshot %s (%s): the ledger does not say it holds its manifest %s", s.name, s.ref, manifest)
		}
		var lacks []string
		for _, k := range holds {
			if _, ok := slices.BinarySearch(keys, k); !ok {
				lacks = append(lacks, k)
			}
		}
		if len(lacks) > 0 {
			t.Errorf("ready snapshot %s (%s) holds %d objects, %d not in the bucket: %.5q", s.name, s.ref, len(holds), len(lacks), lacks)
		}
	}
	if len(ready) == 0 {
		t.Errorf("box %s has no ready snapshot", box)
	}
	t.Logf("%d ready snapshots of %s, each whole in the bucket", len(ready), box)
}
