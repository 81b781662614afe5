package e2e

import (
	"context"
	"crypto/rand"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"golang.org/x/sys/unix"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/operations"
)

// TestForkOnAnotherHost runs the built binary as two hosts on one
// database and one versitygw bucket. A snapshot of a box host-a owns is
// forked on host-b, through the API and then into two boxes through the
// CLI: each fork's job goes on host-b's queue, its new box is host-b's,
// and it holds the snapshot's tree byte-exact, fetched from the bucket,
// while the box it came from stays host-a's. A fork of host-a's box as it
// is now, asked on host-b, is refused in words saying where to ask it. A
// box whose process writes $GREETING from its box template's environment
// to a file forks on host-b into a box whose process writes the same: it
// runs with its source box's environment (on the old code, an empty line).
func TestForkOnAnotherHost(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	h, onA, onB, conn := twoHostsOnABucket(ctx, t)

	amber := makeBox(ctx, t, onA, "amber-fox")
	dirA := h.boxDir("host-a", amber)
	big := make([]byte, 6<<20) // over 4 MiB: it ships as chunks
	if _, err := rand.Read(big); err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string][]byte{"notes.txt": []byte("on host-a"), "src/deep/x.txt": []byte("x"), "big.bin": big} {
		p := filepath.Join(dirA, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, content, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("src/deep/x.txt", filepath.Join(dirA, "link")); err != nil {
		t.Fatal(err)
	}
	want := coretest.TreeOf(t, dirA)
	takeNamed(ctx, t, onA, "one")
	var snap string
	if err := conn.QueryRow(ctx, "SELECT id FROM snapshots WHERE box_id = $1 AND name = 'one' AND state = 'ready'", amber).Scan(&snap); err != nil {
		t.Fatalf("amber-fox's snapshot one: %v", err)
	}
	// host-a's box moves on; the forks on host-b hold the snapshot's tree.
	if err := os.WriteFile(filepath.Join(dirA, "notes.txt"), []byte("changed on host-a after the take"), 0o644); err != nil {
		t.Fatal(err)
	}

	err := onB.do(ctx, "POST", "/api/v1/tools/box_fork", map[string]string{"box": "amber-fox", "name": "now-on-b"}, nil)
	if err == nil || !strings.Contains(err.Error(), "amber-fox is on host host-a: fork it as it is now from host host-a's own pages, API or CLI") {
		t.Fatalf("a fork of host-a's box now, asked on host-b: %v; want it refused, saying where to ask it", err)
	}

	// The Fork dialog on host-b's pages offers the fork, saying where the
	// new box lands.
	pages := newSoakHTTP(onB.base, "")
	if code, body, err := pages.form(ctx, "/signin", url.Values{"password": {Password}}); err != nil || code != http.StatusSeeOther {
		t.Fatalf("sign in on host-b: %d %v %.300s", code, err, body)
	}
	code, dialog, err := pages.page(ctx, "/boxes/amber-fox/snapshots/"+snap+"/fork")
	if err != nil || code != http.StatusOK {
		t.Fatalf("the Fork dialog on host-b: %d %v", code, err)
	}
	if !strings.Contains(dialog, "It lands on this host, host-b, which owns it: amber-fox is on host host-a") || strings.Contains(dialog, "gone from this host") {
		t.Fatalf("the Fork dialog on host-b does not say the fork lands there:\n%.2000s", dialog)
	}

	var op struct {
		Operation struct {
			ID string `json:"id"`
		} `json:"operation"`
	}
	if err := onB.do(ctx, "POST", "/api/v1/boxes/amber-fox/snapshots/"+snap+"/fork", map[string]string{"name": "forked-on-b"}, &op); err != nil {
		t.Fatalf("fork amber-fox's snapshot on host-b: %v", err)
	}
	if state := waitEnded(ctx, t, onB, op.Operation.ID); state != "done" {
		t.Fatalf("the fork on host-b ended %s", state)
	}
	forkedOnB(ctx, t, h, conn, "forked-on-b", want)

	cli := append(os.Environ(), "BOXSNAP_SERVER="+onB.base, "BOXSNAP_TOKEN="+onB.token)
	if out, err := runEnv(cli, h.bin, "snapshot", "fork", "amber-fox", "one", "--name", "twin", "--count", "2"); err != nil {
		t.Fatalf("boxsnap snapshot fork --count 2 on host-b: %v\n%s", err, out)
	}
	for _, name := range []string{"twin-1", "twin-2"} {
		var id, state string
		if err := conn.QueryRow(ctx, "SELECT o.id, o.state FROM operations o JOIN boxes b ON b.id = o.params->>'boxId' WHERE b.name = $1", name).Scan(&id, &state); err != nil {
			t.Fatalf("the fork %s: %v", name, err)
		}
		if state != "done" {
			state = waitEnded(ctx, t, onB, id)
		}
		if state != "done" {
			t.Fatalf("the fork %s ended %s", name, state)
		}
		forkedOnB(ctx, t, h, conn, name, want)
	}
	var owner *string
	if err := conn.QueryRow(ctx, "SELECT owner_host FROM boxes WHERE id = $1", amber).Scan(&owner); err != nil {
		t.Fatal(err)
	}
	if owner == nil || *owner != "host-a" {
		t.Fatalf("amber-fox, forked on host-b, is owned by %s; want host-a still", orNone(owner))
	}

	// A box whose process writes $GREETING, from its box template's
	// environment, to a file: its fork on host-b runs with it too.
	if err := onA.do(ctx, "PUT", "/api/v1/templates/greeter", map[string]any{"backend": "local", "kind": "linux",
		"command": `echo "$GREETING" > greeting.out; exec sleep 600`, "env": map[string]string{"GREETING": "hello from host-a's template"}}, nil); err != nil {
		t.Fatalf("save a box template: %v", err)
	}
	var made struct {
		ID string `json:"id"`
	}
	if err := onA.do(ctx, "POST", "/api/v1/boxes", map[string]string{"name": "greeter", "template": "greeter"}, &made); err != nil {
		t.Fatalf("make greeter on host-a: %v", err)
	}
	greeting := "hello from host-a's template\n"
	if got := waitFile(t, h.boxDir("host-a", made.ID), "greeting.out", 2*time.Minute); got != greeting {
		t.Fatalf("greeter's process on host-a wrote %q, want %q", got, greeting)
	}
	// The snapshot holds no greeting: the fork's process writes its own.
	if err := os.Remove(filepath.Join(h.boxDir("host-a", made.ID), "greeting.out")); err != nil {
		t.Fatal(err)
	}
	takeBoxNamed(ctx, t, onA, "greeter", "one")
	if err := onB.do(ctx, "POST", "/api/v1/boxes/greeter/snapshots/one/fork", map[string]string{"name": "greeter-on-b"}, &op); err != nil {
		t.Fatalf("fork greeter's snapshot on host-b: %v", err)
	}
	if state := waitEnded(ctx, t, onB, op.Operation.ID); state != "done" {
		t.Fatalf("the fork of greeter on host-b ended %s", state)
	}
	var forked string
	if err := conn.QueryRow(ctx, "SELECT id FROM boxes WHERE name = 'greeter-on-b'").Scan(&forked); err != nil {
		t.Fatal(err)
	}
	if got := waitFile(t, h.boxDir("host-b", forked), "greeting.out", 2*time.Minute); got != greeting {
		t.Fatalf("greeter's fork on host-b wrote %q, want %q: it does not run with its source box's environment", got, greeting)
	}
}

// takeBoxNamed takes box named name through api and waits for it to be
// done.
func takeBoxNamed(ctx context.Context, t *testing.T, api *soakHTTP, box, name string) {
	t.Helper()
	var op struct {
		Operation struct {
			ID string `json:"id"`
		} `json:"operation"`
	}
	if err := api.do(ctx, "POST", "/api/v1/boxes/"+box+"/snapshots", map[string]string{"name": name}, &op); err != nil {
		t.Fatalf("take %s of %s: %v", name, box, err)
	}
	if state := waitEnded(ctx, t, api, op.Operation.ID); state != "done" {
		t.Fatalf("the take %s of %s ended %s", name, box, state)
	}
}

// waitFile waits, at most d, for the file name in the folder dir to be
// written, woken by the kernel (inotify) each time a file there is closed
// after a write or moved in, never by a tick, and answers what it holds.
func waitFile(t *testing.T, dir, name string, d time.Duration) string {
	t.Helper()
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	if _, err := unix.InotifyAddWatch(fd, dir, unix.IN_CLOSE_WRITE|unix.IN_MOVED_TO); err != nil {
		t.Fatalf("watch %s: %v", dir, err)
	}
	buf := make([]byte, 4096)
	for deadline := time.Now().Add(d); ; {
		if b, err := os.ReadFile(filepath.Join(dir, name)); err == nil && len(b) > 0 {
			return string(b)
		}
		left := time.Until(deadline)
		if left <= 0 {
			t.Fatalf("nothing wrote %s in %s within %s", name, dir, d)
		}
		if _, err := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, int(left.Milliseconds())+1); err != nil && err != unix.EINTR {
			t.Fatal(err)
		}
		for {
			if n, err := unix.Read(fd, buf); n <= 0 || err != nil {
				break
			}
		}
	}
}

// forkedOnB fails the test unless the box name, forked on host-b, is
// host-b's, its fork's jobs all went on host-b's queue, and its folder
// on host-b holds want.
func forkedOnB(ctx context.Context, t *testing.T, h *binHosts, conn *pgx.Conn, name string, want map[string]string) {
	t.Helper()
	var id string
	var owner *string
	if err := conn.QueryRow(ctx, "SELECT id, owner_host FROM boxes WHERE name = $1", name).Scan(&id, &owner); err != nil {
		t.Fatalf("the fork %s: %v", name, err)
	}
	if owner == nil || *owner != "host-b" {
		t.Fatalf("the fork %s made on host-b is owned by %s, want host-b", name, orNone(owner))
	}
	rows, err := conn.Query(ctx, `SELECT j.queue FROM river_job j JOIN operations o ON o.id = j.args->>'op'
		WHERE o.kind = 'fork' AND o.params->>'boxId' = $1`, id)
	if err != nil {
		t.Fatal(err)
	}
	queues, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	if len(queues) == 0 {
		t.Fatalf("the fork %s has no job", name)
	}
	for _, q := range queues {
		if q != operations.HostQueue("host-b") {
			t.Fatalf("the fork %s's job went on queue %s, want host-b's %s", name, q, operations.HostQueue("host-b"))
		}
	}
	coretest.SameTree(t, "the fork "+name+" on host-b", want, coretest.TreeOf(t, h.boxDir("host-b", id)))
}

// orNone is *s, or "none".
func orNone(s *string) string {
	if s == nil {
		return "none"
	}
	return *s
}
