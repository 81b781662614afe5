package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/boxsnap/boxsnap/app/operations"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/providers/qemu/qemutest"
)

// TestQEMUBoxOwnedByItsHost runs the built binary as two hosts on one
// database, each with a QEMU backend of the same ID on a libvirtd of its
// own. A QEMU box made on host-a is host-a's; its takes and restores run
// on host-a's queue and succeed while host-b's workers run; host-b, started
// after the box's snapshots exist (its reconcile at start) and running its
// periodic work, never marks host-a's guest gone nor its snapshots
// missing; host-b's hosts list says host-a owns it; a move to host-b is
// refused in words that say no content store carries it, and so is a fork
// of its snapshot there; a revert made with virsh on host-b's libvirtd,
// host-b not leading, is logged once as made outside boxsnap; and a box
// whose owner was cleared (as one made before QEMU boxes had an owner)
// becomes host-a's again, the host whose libvirtd lists it.
func TestQEMUBoxOwnedByItsHost(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	dA, dB := qemutest.OwnLibvirtd(t), qemutest.OwnLibvirtd(t)
	tpl := qemuTemplates(t, qemutest.Guest(t))
	h := newBinHosts(t)
	short := []string{"BOXSNAP_QEMU_TEMPLATES=" + tpl, "BOXSNAP_RECONCILE_INTERVAL=5s", "BOXSNAP_ROOM_INTERVAL=5s", "BOXSNAP_HOSTS_INTERVAL=5s", "BOXSNAP_OUTSIDE_INTERVAL=5s"}
	_, baseA := h.start("host-a", append([]string{"BOXSNAP_QEMU_SOCKET=" + dA.Socket}, short...), "serve")
	tok, err := personToken(ctx, baseA, Password)
	if err != nil {
		t.Fatal(err)
	}
	onA := newSoakHTTP(baseA, tok)
	var made, made2 struct {
		ID string `json:"id"`
	}
	var takeOn func(api *soakHTTP, box, name string)
	if err := onA.do(ctx, "POST", "/api/v1/boxes", map[string]string{"name": "amber-fox", "backend": "qemu", "kind": "linux", "template": "busybox"}, &made); err != nil {
		t.Fatalf("make the QEMU box on host-a: %v", err)
	}
	conn, err := pgx.Connect(ctx, strings.TrimSuffix(h.dsn, " pool_max_conns=12"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	rows := watchRows(ctx, t, h.dsn, "e2e_hostowned", "river_job", "boxes", "river_leader", "box_log")
	owner := func() string {
		t.Helper()
		var o *string
		if err := conn.QueryRow(ctx, "SELECT owner_host FROM boxes WHERE id = $1", made.ID).Scan(&o); err != nil {
			t.Fatal(err)
		}
		if o == nil {
			return ""
		}
		return *o
	}
	if got := owner(); got != "host-a" {
		t.Fatalf("the QEMU box made on host-a is owned by %q, not host-a", got)
	}
	take := func(api *soakHTTP, name string) {
		t.Helper()
		takeOn(api, "amber-fox", name)
	}
	takeOn = func(api *soakHTTP, box, name string) {
		t.Helper()
		var op struct {
			Operation struct {
				State, Error string
			} `json:"operation"`
		}
		if err := api.do(ctx, "POST", "/api/v1/boxes/"+box+"/snapshots?wait=true", map[string]string{"name": name}, &op); err != nil {
			t.Fatalf("take %s (asked on %s): %v", name, api.base, err)
		}
		if op.Operation.State != "done" {
			t.Fatalf("take %s (asked on %s) ended %s: %s", name, api.base, op.Operation.State, op.Operation.Error)
		}
	}
	take(onA, "first")
	take(onA, "second")
	leader := func() string { return riverLeader(ctx, conn) }
	rows.waitFor(ctx, t, "host-a leads", func() bool { return leader() != "" })
	leaderA := leader()

	// host-b starts now: its reconcile at start lists its own libvirtd,
	// which never held amber-fox.
	// An operation is asked on the box's own host (a page on another host
	// plans it against that host's libvirtd, and refuses it), while both
	// hosts' workers run.
	procB, baseB := h.start("host-b", append([]string{"BOXSNAP_QEMU_SOCKET=" + dB.Socket}, short...), "serve")
	onB := newSoakHTTP(baseB, tok)
	for _, name := range []string{"first", "second"} {
		var op struct {
			Operation struct {
				ID string `json:"id"`
			} `json:"operation"`
		}
		if err := onA.do(ctx, "POST", "/api/v1/boxes/amber-fox/snapshots/"+name+"/restore", map[string]any{"replace": true}, &op); err != nil {
			t.Fatalf("restore %s: %v", name, err)
		}
		if state := waitEnded(ctx, t, onA, op.Operation.ID); state != "done" {
			t.Fatalf("the restore of %s ended %s", name, state)
		}
		take(onA, "after the restore of "+name)
	}

	// host-b's own reconcile of its one-host backends runs, more than once.
	reconciledOnB := func() int {
		var n int
		_ = conn.QueryRow(ctx, `SELECT count(*) FROM river_job WHERE kind = 'sweep' AND args->>'name' = 'reconcile-here'
			AND args->>'host' = 'host-b' AND state = 'completed'`).Scan(&n)
		return n
	}
	rows.waitFor(ctx, t, "host-b reconciles its own QEMU backend twice", func() bool { return reconciledOnB() >= 2 })
	allReady(ctx, t, conn, made.ID, "host-b's reconcile")
	var missing int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM guest_missing WHERE box_id = $1", made.ID).Scan(&missing); err != nil {
		t.Fatal(err)
	}
	var gone int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM box_log WHERE box_id = $1 AND kind = 'guest-gone'", made.ID).Scan(&gone); err != nil {
		t.Fatal(err)
	}
	if missing+gone > 0 {
		t.Fatalf("host-b's reconcile judged host-a's guest gone (%d missing, %d logged)", missing, gone)
	}

	// Every operation of amber-fox ran from host-a's own queue.
	jobs, err := conn.Query(ctx, "SELECT DISTINCT queue FROM river_job WHERE kind <> 'sweep' AND args->>'box' = $1", made.ID)
	if err != nil {
		t.Fatal(err)
	}
	queues := []string{}
	for jobs.Next() {
		var q string
		if err := jobs.Scan(&q); err != nil {
			t.Fatal(err)
		}
		queues = append(queues, q)
	}
	if jobs.Err() != nil {
		t.Fatal(jobs.Err())
	}
	if len(queues) != 1 || queues[0] != operations.HostQueue("host-a") {
		t.Fatalf("amber-fox's operations went on the queues %v, not host-a's %s alone", queues, operations.HostQueue("host-a"))
	}

	// host-b's list of the hosts says host-a owns the box.
	var hostsAnswer struct {
		Hosts []struct {
			Name  string `json:"name"`
			Boxes int64  `json:"boxes"`
		} `json:"hosts"`
	}
	if err := onB.do(ctx, "GET", "/api/v1/hosts", nil, &hostsAnswer); err != nil {
		t.Fatal(err)
	}
	owned := map[string]int64{}
	for _, x := range hostsAnswer.Hosts {
		owned[x.Name] = x.Boxes
	}
	if owned["host-a"] != 1 || owned["host-b"] != 0 {
		t.Fatalf("host-b's list of hosts: %+v", hostsAnswer.Hosts)
	}

	// A move to host-b is refused, saying why and what carries it instead.
	err = onB.do(ctx, "POST", "/api/v1/boxes/amber-fox/move", map[string]string{"host": "host-b"}, nil)
	if err == nil || !strings.Contains(err.Error(), "no content store carries") || !strings.Contains(err.Error(), "Export one of its snapshots on host host-a") {
		t.Fatalf("the move of a QEMU box to host-b: %v", err)
	}
	if got := owner(); got != "host-a" {
		t.Fatalf("after a refused move the box is owned by %q", got)
	}
	// So is a fork of one of its snapshots asked on host-b: no content
	// store carries a QEMU snapshot either.
	err = onB.do(ctx, "POST", "/api/v1/boxes/amber-fox/snapshots/first/fork", map[string]string{"name": "forked-on-b"}, nil)
	if err == nil || !strings.Contains(err.Error(), "no content store carries them: fork it on host host-a, or export one of its snapshots there and import it here.") {
		t.Fatalf("a fork of a QEMU box's snapshot asked on host-b: %v", err)
	}

	// A revert made with libvirt on host-b, which does not lead, is seen by
	// a scan on host-b (the leader fans outside-here out to each live host;
	// host-b's workers may also run the shared scan) and logged once, over
	// two more scans, on host-b's box.
	if err := onB.do(ctx, "POST", "/api/v1/boxes", map[string]string{"name": "brisk-owl", "backend": "qemu", "kind": "linux", "template": "busybox"}, &made2); err != nil {
		t.Fatalf("make the QEMU box on host-b: %v", err)
	}
	takeOn(onB, "brisk-owl", "one")
	takeOn(onB, "brisk-owl", "two")
	var guest, ref string
	if err := conn.QueryRow(ctx, "SELECT b.guest_ref, s.ref FROM boxes b JOIN snapshots s ON s.box_id = b.id WHERE b.id = $1 AND s.name = 'one'", made2.ID).Scan(&guest, &ref); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.CommandContext(ctx, "virsh", "-c", "qemu+unix:///system?socket="+dB.Socket, "snapshot-revert", guest, ref).CombinedOutput(); err != nil {
		t.Fatalf("virsh snapshot-revert on host-b's libvirtd: %v: %s", err, out)
	}
	outside := func() int {
		var n int
		_ = conn.QueryRow(ctx, "SELECT count(*) FROM box_log WHERE box_id = $1 AND kind = $2", made2.ID, snapshots.EvRestoredOutside).Scan(&n)
		return n
	}
	rows.waitFor(ctx, t, "the revert on host-b logged as made outside boxsnap", func() bool { return outside() > 0 })
	scansOnB := func() int {
		var n int
		_ = conn.QueryRow(ctx, `SELECT count(*) FROM river_job WHERE kind = 'sweep' AND args->>'name' = 'outside-here'
			AND args->>'host' = 'host-b' AND state = 'completed'`).Scan(&n)
		return n
	}
	fannedOut := scansOnB()
	if got := leader(); got != leaderA || fannedOut == 0 {
		t.Fatalf("no outside-here ran on host-b while host-a led (leader %q, was host-a's %q; %d outside-here jobs on host-b)", got, leaderA, fannedOut)
	}
	rows.waitFor(ctx, t, "two more scans on host-b", func() bool { return scansOnB() >= fannedOut+2 })
	if n := outside(); n != 1 {
		t.Fatalf("one revert on host-b was logged %d times as made outside boxsnap", n)
	}

	// A box no host owns (as one made before QEMU boxes had an owner)
	// becomes the host's whose libvirtd lists it: host-a's, never host-b's.
	if _, err := conn.Exec(ctx, "UPDATE boxes SET owner_host = NULL WHERE id = $1", made.ID); err != nil {
		t.Fatal(err)
	}
	rows.waitFor(ctx, t, "amber-fox owned again", func() bool { return owner() != "" })
	if got := owner(); got != "host-a" {
		t.Fatalf("the box no host owned became %q's, not host-a's whose libvirtd holds it", got)
	}

	// host-b runs again with no QEMU backend at all: its reconcile (at
	// start, and its own on its queue) leaves host-a's QEMU snapshots
	// ready, as a backend not in its settings may be another host's.
	procB.stop()
	before := reconciledOnB()
	h.start("host-b", short[1:], "serve")
	rows.waitFor(ctx, t, "host-b, without QEMU, reconciles twice", func() bool { return reconciledOnB() >= before+2 })
	allReady(ctx, t, conn, made.ID, "host-b's reconcile without a QEMU backend")
}

// allReady fails the test unless each of box's snapshots (four at least)
// is ready after what, and none was ever marked unavailable (host-a's
// reconcile would bring it back ready: its box log keeps the mark).
func allReady(ctx context.Context, t *testing.T, conn *pgx.Conn, box, what string) {
	t.Helper()
	var marked int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM box_log WHERE box_id = $1 AND kind = 'snapshot-unavailable'", box).Scan(&marked); err != nil {
		t.Fatal(err)
	}
	if marked > 0 {
		t.Errorf("%d of host-a's snapshots were marked unavailable by %s", marked, what)
	}
	rows, err := conn.Query(ctx, "SELECT name, state FROM snapshots WHERE box_id = $1", box)
	if err != nil {
		t.Fatal(err)
	}
	snaps := map[string]string{}
	for rows.Next() {
		var name, state string
		if err := rows.Scan(&name, &state); err != nil {
			t.Fatal(err)
		}
		snaps[name] = state
	}
	if rows.Err() != nil {
		t.Fatal(rows.Err())
	}
	if len(snaps) < 4 {
		t.Fatalf("the box's snapshots: %v", snaps)
	}
	for name, state := range snaps {
		if state != "ready" {
			t.Errorf("snapshot %s of host-a's box is %s after %s", name, state, what)
		}
	}
}

// qemuTemplates makes a QEMU templates folder holding the test guest as
// the template busybox, and answers it.
func qemuTemplates(t *testing.T, g qemutest.GuestFiles) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "templates")
	one := filepath.Join(dir, "busybox")
	if err := os.MkdirAll(one, 0o755); err != nil {
		t.Fatal(err)
	}
	for from, to := range map[string]string{g.Kernel: "vmlinuz", g.Initrd: "initrd.img", g.Disk: "disk.qcow2"} {
		if err := copyPlain(from, filepath.Join(one, to)); err != nil {
			t.Fatal(err)
		}
	}
	js, err := json.Marshal(map[string]any{"cmdline": g.Cmdline, "memoryMiB": 256, "cpus": 1, "identityReset": qemutest.ResetVersion})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(one, "template.json"), js, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// copyPlain copies the file from to to.
func copyPlain(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	return errors.Join(err, out.Close())
}
