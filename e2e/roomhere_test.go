package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/boxsnap/boxsnap/providers/local"
)

// TestRoomSweptOnEachHost runs the built binary as two hosts on one
// database, host-a River's leader and host-b's local folder a 32 MiB
// tmpfs. An agent takes snapshots of a box on each host; then host-b's
// disk is filled past the room setting plus the sweep's margin. host-b's
// agent snapshots are deleted for room while host-a stays the leader,
// host-b runs its own room sweep (room-here) on its queue, and host-a's
// snapshots, on a disk under the line, stay ready.
func TestRoomSweptOnEachHost(t *testing.T) {
	if os.Geteuid() != 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("mounting a tmpfs needs root (CI=true: it must run)")
		}
		t.Skip("mounting a tmpfs needs root")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	h := newBinHosts(t)
	localB := filepath.Join(h.dataDir("host-b"), "local")
	if err := os.MkdirAll(localB, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=32m,mode=0755", "tmpfs", localB).CombinedOutput(); err != nil {
		t.Fatalf("mount a 32 MiB tmpfs for host-b's local folder: %v: %s", err, out)
	}
	t.Cleanup(func() {
		_ = local.UnmountAll(localB)
		if out, err := exec.Command("umount", "-l", localB).CombinedOutput(); err != nil {
			t.Logf("umount %s: %v: %s", localB, err, out)
		}
	})
	short := []string{"BOXSNAP_ROOM_INTERVAL=3s", "BOXSNAP_HOSTS_INTERVAL=5s"}
	_, baseA := h.start("host-a", short, "serve")
	conn, err := pgx.Connect(ctx, strings.TrimSuffix(h.dsn, " pool_max_conns=12"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	rows := watchRows(ctx, t, h.dsn, "e2e_roomhere", "river_leader", "snapshots")
	leader := func() string { return riverLeader(ctx, conn) }
	rows.waitFor(ctx, t, "host-a leads", func() bool { return leader() != "" })
	leaderA := leader()
	_, baseB := h.start("host-b", short, "serve")

	tok, err := personToken(ctx, baseA, Password)
	if err != nil {
		t.Fatal(err)
	}
	var th struct {
		Token string `json:"token"`
	}
	if err := newSoakHTTP(baseA, tok).do(ctx, "POST", "/api/v1/threads", map[string]string{"title": "room on each host"}, &th); err != nil {
		t.Fatalf("a thread for the agent: %v", err)
	}
	// An agent makes a box from a template alone: one in each host's
	// templates folder.
	for _, host := range []string{"host-a", "host-b"} {
		dir := filepath.Join(h.dataDir(host), "templates", "room")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "README"), []byte("a box of the room test\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := newSoakHTTP(baseA, tok).do(ctx, "PUT", "/api/v1/templates/room", map[string]any{"backend": "local", "kind": "linux", "source": "room"}, nil); err != nil {
		t.Fatalf("save the box template: %v", err)
	}
	onA, onB := newSoakHTTP(baseA, th.Token), newSoakHTTP(baseB, th.Token)
	fromTemplate := func(api *soakHTTP, name string) string {
		t.Helper()
		var got struct {
			ID string `json:"id"`
		}
		if err := api.do(ctx, "POST", "/api/v1/boxes", map[string]string{"name": name, "template": "room"}, &got); err != nil {
			t.Fatalf("make box %s: %v", name, err)
		}
		return got.ID
	}
	amber, brisk := fromTemplate(onA, "amber-fox"), fromTemplate(onB, "brisk-lake")
	const n = 4
	takeSnapshots(ctx, t, onA, "amber-fox", h.boxDir("host-a", amber), n)
	takeSnapshots(ctx, t, onB, "brisk-lake", h.boxDir("host-b", brisk), n)
	ready := func(box string) int {
		var c int
		if err := conn.QueryRow(ctx, "SELECT count(*) FROM snapshots WHERE box_id = $1 AND state = 'ready' AND by_kind = 'agent'", box).Scan(&c); err != nil {
			t.Fatal(err)
		}
		return c
	}
	if a, b := ready(amber), ready(brisk); a != n || b != n {
		t.Fatalf("before the fill: %d of host-a's and %d of host-b's agent snapshots ready, want %d each", a, b, n)
	}

	// host-b's disk past 85% + 7: a file fills it to about 96%.
	var fs syscall.Statfs_t
	if err := syscall.Statfs(localB, &fs); err != nil {
		t.Fatal(err)
	}
	total, free := int64(fs.Blocks)*fs.Bsize, int64(fs.Bavail)*fs.Bsize
	fill := free - total*4/100
	if err := os.WriteFile(filepath.Join(localB, "filler"), make([]byte, fill), 0o644); err != nil {
		t.Fatalf("fill host-b's disk with %d bytes: %v", fill, err)
	}

	// The room sweep runs every 3 s: two minutes is dozens of rounds.
	swept, cancelSwept := context.WithTimeout(ctx, 2*time.Minute)
	defer cancelSwept()
	rows.waitFor(swept, t, "host-b's agent snapshots swept for room", func() bool { return ready(brisk) < n })
	time.Sleep(5 * time.Second) // a round more: host-a's would go now too if they were to
	t.Logf("after the fill: %d of host-a's and %d of host-b's %d agent snapshots ready", ready(amber), ready(brisk), n)
	var why int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM box_log WHERE box_id = $1 AND coalesce(actor_why, '') || ' ' || words LIKE '%host-b''s storage was%full%'", brisk).Scan(&why); err != nil {
		t.Fatal(err)
	}
	if why == 0 {
		t.Errorf("host-b's box log never says its storage was full")
	}
	if got := leader(); got != leaderA {
		t.Fatalf("the leader changed from %s to %s: host-b's sweep proves nothing", leaderA, got)
	}
	// Whichever process runs the leader's periodic room job sweeps its own
	// host's storage; each other live host sweeps its own on its queue.
	// Old code had no such run, and swept host-b's disk only when host-b's
	// worker happened to take the room job.
	hereOnB := func() bool {
		var c int
		_ = conn.QueryRow(ctx, `SELECT count(*) FROM river_job WHERE kind = 'sweep' AND args->>'name' = 'room-here'
			AND args->>'host' = 'host-b' AND state = 'completed'`).Scan(&c)
		return c > 0
	}
	rows.waitFor(swept, t, "host-b's own room sweep on its queue", hereOnB)
	if a := ready(amber); a != n {
		t.Errorf("%d of host-a's %d agent snapshots are ready after host-b's disk filled", a, n)
	}
}
