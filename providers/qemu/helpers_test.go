package qemu_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/dbtest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/fork"
	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/providertest"
	"github.com/boxsnap/boxsnap/providers/qemu"
	"github.com/boxsnap/boxsnap/providers/qemu/qemutest"
)

// TestMain stops the private libvirtd after the tests, and the private
// PostgreSQL the core's tests start (dbtest); or, when a test starts this
// binary as a worker process, runs a boxsnap worker the test kills.
func TestMain(m *testing.M) {
	if os.Getenv(workerEnv) != "" {
		os.Exit(runWorkerProcess())
	}
	os.Exit(qemutest.Main(runFunc(func() int { return dbtest.Main(m) })))
}

// runFunc runs the tests as qemutest.Main asks.
type runFunc func() int

func (f runFunc) Run() int { return f() }

// template is the name of the test guest's template.
const template = "busybox"

// bootWait bounds one boot of the test guest under TCG on a shared host.
const bootWait = 3 * time.Minute

// newBackend gives a backend on the test binary's libvirtd, its boxes in a
// folder of its own (short: unix socket paths are bounded), whose domains
// are all released at the test's end.
func newBackend(t *testing.T) *qemu.Backend {
	t.Helper()
	b, _ := newBackendConfig(t)
	return b
}

// newBackendConfig is newBackend, with the configuration it was made from,
// changed by each of opts first.
func newBackendConfig(t *testing.T, opts ...func(*qemu.Config)) (*qemu.Backend, qemu.Config) {
	t.Helper()
	d := qemutest.Libvirtd(t)
	files := qemutest.Guest(t)
	dir, err := os.MkdirTemp("", "bsq-")
	if err != nil {
		t.Fatal(err)
	}
	cfg := qemu.Config{ID: "qemu-test", Socket: d.Socket, Install: "intest", Dir: dir,
		Templates: map[string]qemu.Template{template: {Kernel: files.Kernel, Initrd: files.Initrd, Disk: files.Disk,
			Cmdline: files.Cmdline, MemoryMiB: 256, CPUs: 1, ResetVersion: qemutest.ResetVersion}}}
	for _, o := range opts {
		o(&cfg)
	}
	b, err := qemu.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx := context.Background()
		list, _ := b.Domains(ctx)
		for _, g := range list {
			if err := b.Release(ctx, g); err != nil {
				t.Errorf("release %s at the test's end: %v", g.Ref, err)
			}
		}
		_ = b.Close()
		_ = os.RemoveAll(dir)
	})
	return b, cfg
}

// newGuest makes a box's guest from the test template and starts it, up to
// its ready line.
func newGuest(t *testing.T, b *qemu.Backend, box string) providers.Guest {
	t.Helper()
	ctx := context.Background()
	g, err := b.Acquire(ctx, providers.BoxSpec{Box: providers.BoxIdentity{ID: box, Name: box, Kind: qemu.KindLinux, Install: "intest"}, Template: template})
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	boot(t, b, g)
	return g
}

// boot starts the guest and waits for its ready line; it answers the boot
// ID.
func boot(t *testing.T, b *qemu.Backend, g providers.Guest) string {
	t.Helper()
	n := len(qemutest.Boots(b.ConsoleLog(g)))
	if err := b.Start(context.Background(), g); err != nil {
		t.Fatalf("Start %s: %v", g.Ref, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), bootWait)
	defer cancel()
	id, err := qemutest.WaitBoot(ctx, b.ConsoleLog(g), n)
	if err != nil {
		t.Fatalf("boot %s: %v", g.Ref, err)
	}
	return id
}

// sh runs a command in the running guest and answers its output; a failed
// command fails the test.
func sh(t *testing.T, b *qemu.Backend, g providers.Guest, cmd string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), bootWait)
	defer cancel()
	out, code, err := qemutest.Shell(ctx, b.SerialSocket(g), cmd)
	if err != nil {
		t.Fatalf("in %s: %v", g.Ref, err)
	}
	if code != 0 {
		t.Fatalf("in %s: %q exited %d: %s", g.Ref, cmd, code, out)
	}
	return out
}

// running starts the guest where it is stopped, up to its ready line.
func running(t *testing.T, b *qemu.Backend, g providers.Guest) {
	t.Helper()
	on, err := b.Runs(context.Background(), g)
	if err != nil {
		t.Fatalf("Runs %s: %v", g.Ref, err)
	}
	if !on {
		boot(t, b, g)
	}
}

func harness() providertest.Harness {
	return providertest.Harness{
		Kind:    qemu.KindLinux,
		Install: "intest",
		New: func(t *testing.T) (providers.Backend, providers.Boxes) {
			b := newBackend(t)
			return b, b
		},
		NewGuest: func(t *testing.T, pb providers.Backend, _ providers.Boxes, id string) providers.Guest {
			return newGuest(t, pb.(*qemu.Backend), id)
		},
		WriteState: func(t *testing.T, pb providers.Backend, g providers.Guest, state string) {
			b := pb.(*qemu.Backend)
			running(t, b, g)
			sh(t, b, g, fmt.Sprintf("printf '%%s' '%s' > /root/state && sync", strings.ReplaceAll(state, "'", "")))
		},
		ReadState: func(t *testing.T, pb providers.Backend, g providers.Guest) string {
			b := pb.(*qemu.Backend)
			running(t, b, g)
			return sh(t, b, g, "cat /root/state")
		},
		Unreachable: func(t *testing.T) providers.Backend {
			b, err := qemu.New(qemu.Config{ID: "qemu-gone", Socket: "/nonexistent/libvirt-sock", Install: "intest", Dir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			return b
		},
	}
}

// workerCore starts a core on a fresh database with b as its backend and
// no workers of its own: the test runs each operation in worker processes
// it starts (startWorker) on the database at dsn, with the core's local
// root, and kills.
func workerCore(t *testing.T, b *qemu.Backend) (env *coretest.Env, dsn, root string) {
	t.Helper()
	ctx := context.Background()
	dsn = dbtest.NewDSN(t)
	pool, err := pgxpool.New(ctx, dsn+" pool_max_conns=12")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	root = t.TempDir()
	env, err = coretest.Build(ctx, pool, coretest.Options{Install: "intest", LocalRoot: root, NoWorkers: true, NoTrash: true,
		Extra: []snapshots.Backend{{ID: b.ID(), Kind: "qemu", Label: b.ID(), Snap: b, Boxes: b}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(env.Stop)
	roomy(t, env)
	return env, dsn, root
}

// roomy sets env's room setting at its highest: this machine's disk, which
// other work fills, holds the backend's folder, and a take past the
// setting is refused (room_test.go checks the refusal on a file system of
// its own).
func roomy(t *testing.T, env *coretest.Env) {
	t.Helper()
	ctx := context.Background()
	settings, err := env.Core.Settings(ctx)
	if err != nil {
		t.Fatal(err)
	}
	settings.RoomPercent = snapshots.MaxRoomPercent
	if err := env.Core.SaveSettings(ctx, snapshots.Owner(), settings); err != nil {
		t.Fatal(err)
	}
}

// bootedBox acquires a box named name from the test template on b through
// env's core and boots its guest up to its ready line.
func bootedBox(t *testing.T, env *coretest.Env, b *qemu.Backend, name string) (*snapshots.Box, providers.Guest) {
	t.Helper()
	box, err := env.Boxes.AcquireBox(context.Background(), snapshots.Owner(), snapshots.BoxRequest{Name: name, Kind: qemu.KindLinux, Backend: b.ID(), Template: template})
	if err != nil {
		t.Fatalf("AcquireBox: %v", err)
	}
	g := providers.Guest{Backend: b.ID(), Kind: qemu.KindLinux, Ref: box.GuestRef, Generation: 1}
	boot(t, b, g)
	return box, g
}

// beforeTheTake is what markSource writes into a source guest's
// /root/state, which a fork of its snapshot must hold.
const beforeTheTake = "written before the take"

// markSource writes beforeTheTake into the running guest's /root/state
// and answers its identity, which a fork of it must not keep.
func markSource(t *testing.T, b *qemu.Backend, g providers.Guest) identity {
	t.Helper()
	own := readIdentity(t, b, g)
	sh(t, b, g, "printf '"+beforeTheTake+"' > /root/state && sync")
	return own
}

// keep keeps the snapshot sn of box through env's core, with no end
// date, and waits for the keep to end done.
func keep(t *testing.T, env *coretest.Env, box, sn string) {
	t.Helper()
	op, err := env.Keeps.Keep(context.Background(), snapshots.Owner(), snapshots.KeepRequest{Box: box, Snapshot: sn})
	if err != nil {
		t.Fatalf("Keep: %v", err)
	}
	if got := waitOp(t, env, op.ID); got.State != snapshots.OpDone {
		t.Fatalf("the keep ended %s: %s", got.State, coretest.Deref(got.Error))
	}
}

// resumed waits for an operation a killed worker left to another: one
// whose state is unknown once waited for is checked again, then waited
// for again.
func resumed(t *testing.T, env *coretest.Env, id string) *snapshots.Operation {
	t.Helper()
	done := waitOp(t, env, id)
	if done.State == snapshots.OpUnknown {
		if _, err := env.Core.CheckNow(context.Background(), snapshots.Owner(), id); err != nil {
			t.Fatal(err)
		}
		done = waitOp(t, env, id)
	}
	return done
}

// forkDone forks the snapshot sn of box into a new box named name through
// env's core and waits for the fork to end done.
func forkDone(t *testing.T, env *coretest.Env, box, sn, name string) {
	t.Helper()
	op, err := env.Forks.Fork(context.Background(), snapshots.Owner(), fork.ForkRequest{Box: box, Snapshot: sn, Name: name})
	if err != nil {
		t.Fatalf("Fork: %v", err)
	}
	if got := waitOp(t, env, op.ID); got.State != snapshots.OpDone {
		t.Fatalf("the fork ended %s: %s", got.State, coretest.Deref(got.Error))
	}
}

// forkHolds starts the fork named name, up to its first ready line, and
// checks it holds the file its source wrote before the take (markSource);
// with own set, that its identity reset gave it a machine ID, an SSH host
// key and a host ID of its own. what names the fork in a failure. It
// answers the fork's guest.
func forkHolds(t *testing.T, env *coretest.Env, b *qemu.Backend, name, what string, own *identity) providers.Guest {
	t.Helper()
	ctx := context.Background()
	forked, err := env.Core.Box(ctx, snapshots.Owner(), name)
	if err != nil {
		t.Fatal(err)
	}
	fg := providers.Guest{Backend: b.ID(), Kind: qemu.KindLinux, Ref: forked.GuestRef, Generation: forked.Generation}
	running(t, b, fg)
	wctx, cancel := context.WithTimeout(ctx, bootWait)
	defer cancel()
	if _, err := qemutest.WaitBoot(wctx, b.ConsoleLog(fg), 0); err != nil {
		t.Fatalf("%s: its boot: %v", what, err)
	}
	if got := strings.TrimSpace(sh(t, b, fg, "cat /root/state")); got != beforeTheTake {
		t.Fatalf("%s holds %q, want the file written before the take", what, got)
	}
	if own == nil {
		return fg
	}
	if id := readIdentity(t, b, fg); id.MachineID == own.MachineID || id.HostKey == own.HostKey || id.HostID == own.HostID {
		t.Fatalf("%s kept part of its source's identity: %+v, source %+v", what, id, *own)
	}
	return fg
}
