// Package coretest gives tests a running core: a fresh database (dbtest), the
// local backend in a temporary folder, the core and a started River client
// with the workers jobs registers. It is for tests only; it imports dbtest,
// which needs dbtest.Main in the test binary's TestMain. It imports app/api
// (Env.APIOptions), so package api's internal tests must not import it, and
// it must never import app/web, whose internal tests import it.
package coretest

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/boxsnap/boxsnap/app/auth"
	"github.com/boxsnap/boxsnap/app/dbtest"
	"github.com/boxsnap/boxsnap/app/pictures"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/approvals"
	"github.com/boxsnap/boxsnap/app/snapshots/boxes"
	"github.com/boxsnap/boxsnap/app/snapshots/boxview"
	"github.com/boxsnap/boxsnap/app/snapshots/contents"
	"github.com/boxsnap/boxsnap/app/snapshots/fork"
	"github.com/boxsnap/boxsnap/app/snapshots/heads"
	"github.com/boxsnap/boxsnap/app/snapshots/hosts"
	"github.com/boxsnap/boxsnap/app/snapshots/keep"
	"github.com/boxsnap/boxsnap/app/snapshots/restore"
	"github.com/boxsnap/boxsnap/app/snapshots/seams"
	"github.com/boxsnap/boxsnap/app/snapshots/sweeps"
	"github.com/boxsnap/boxsnap/app/snapshots/tab"
	"github.com/boxsnap/boxsnap/app/snapshots/take"
	"github.com/boxsnap/boxsnap/app/store"
	"github.com/boxsnap/boxsnap/jobs"
	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/local"
	"github.com/boxsnap/boxsnap/providers/local/ship"
)

// Env is a running core for one test.
type Env struct {
	Pool  *pgxpool.Pool
	Store *store.Store
	Auth  *auth.Service
	Core  *snapshots.Service
	// Take is the core's take: a snapshot of a box, a person's, an
	// agent's or an automatic one.
	Take *take.Take
	// Restores is the core's restores, resets and their undos.
	Restores *restore.Restores
	// Sweeps are the core's periodic work, on the same clock.
	Sweeps *sweeps.Sweeps
	// Contents is the core's look inside snapshots and their moves.
	Contents *contents.Contents
	// Approvals is the requests for the person's word, which the core's
	// restore asks through.
	Approvals *approvals.Approvals
	// Pictures is the snapshots' pictures, which the core's take and
	// restore capture with once given a taker (Pictures.Use).
	Pictures *pictures.Pictures
	Client   *river.Client[pgx.Tx]
	// Tab is the Snapshots tab's lists on the same store and kernel.
	Tab *tab.Tab
	// Boxes is the boxes and threads, on Core.
	Boxes *boxes.Boxes
	// Keeps is the core's keeps, renewals, deletes and edits of a
	// snapshot's name and note.
	Keeps *keep.Keeps
	// Heads is the boxes' heads and the snapshots' lineages, on Core.
	Heads *heads.Heads
	// BoxViews is a box's page's read model, on Core.
	BoxViews *boxview.Views
	// Forks is the fork, on Core.
	Forks *fork.Forks
	// Hosts is the hosts, this env's among them (Options.Host), seen when
	// the env starts.
	Hosts *hosts.Hosts
	// Jobs is the same client with its presence (jobs.Client): its Stop
	// lets the presence go.
	Jobs   *jobs.Client
	Local  *local.Backend
	Logger *slog.Logger
	// Install is this test's install ID.
	Install string
	stop    func()
}

// Options change an Env.
type Options struct {
	// NoWorkers makes an insert-only client: operations wait in the queue.
	NoWorkers bool
	// Extra adds backends beside the local one.
	Extra []snapshots.Backend
	// Now is the core's clock.
	Now func() time.Time
	// LocalRoot is the local backend's folder; a temporary one when empty.
	LocalRoot string
	// Wrap wraps the local backend (tests that stall or fail a step).
	Wrap func(snapshots.Backend) snapshots.Backend
	// Logger is the env's logger; warnings to stderr when nil.
	Logger *slog.Logger
	// Price makes the local backend charge for its snapshots (the paid
	// ceiling's tests; local.Config.Price).
	Price *providers.Price
	// TaskSnooze is how long a job snoozes between looks at its provider
	// task; 0: the engine's default.
	TaskSnooze time.Duration
	// Redeem bounds a redeem from another boxsnap (tests of its timeouts
	// and size cap); zero fields are the core's defaults.
	Redeem contents.RedeemLimits
	// Templates is the local backend's templates folder; none when empty.
	Templates string
	// NoDiskImages bounds each new local box's disk by the watch, as
	// BOXSNAP_LOCAL_DISK_IMAGES=false does; by default, as in boxsnap, each
	// is a file system of its own where loop mounts work
	// (local.Config.DiskImages).
	NoDiskImages bool
	// DiskBytes is the disk bound of a local box whose template sets none;
	// the package's DiskBytes when 0.
	DiskBytes int64
	// NoTrash turns the trash off in Settings, so a release deletes at once,
	// for tests of what the release that deletes does.
	NoTrash bool
	// Install is the install ID the database starts with, for a backend
	// made before the core (Extra), which labels what it makes with it and
	// finds it again by it; empty: a new one.
	Install string
	// Host is the host this env runs on: its local backend's boxes are
	// owned by it and its workers listen on its queue; empty: the
	// machine's hostname. Two envs on one database with hosts of their own
	// are two hosts.
	Host string
	// ContentStore keeps the local backend's snapshots in a bucket too.
	ContentStore *ship.Remote
	// ContentCacheBytes bounds the content the local backend keeps with a
	// content store (local.Config.ContentCacheBytes); 0: its default share
	// of the file system.
	ContentCacheBytes int64
	// Intervals are the River client's periodic intervals (the recover
	// interval is also how often a worker's presence looks for dead
	// workers' operations); zero ones are jobs' defaults.
	Intervals jobs.Intervals
}

// DiskBytes is the disk bound the tests' local boxes get when their
// template sets none: what the tests write fits in it many times, and each
// box's image takes about 95 MiB on the host at once, not the 170 MiB of
// boxsnap's 16 GiB default, so the packages that make many boxes at once
// stay well within a shared test disk.
const DiskBytes = 256 << 20

// New starts a core for t on a fresh database, stopped at t's cleanup.
func New(t testing.TB, opts Options) *Env {
	t.Helper()
	pool := dbtest.New(t)
	if opts.LocalRoot == "" {
		opts.LocalRoot = t.TempDir()
		if err := local.Passable(opts.LocalRoot, os.TempDir()); err != nil {
			t.Fatal(err)
		}
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	e, err := Build(context.Background(), pool, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Stop)
	return e
}

// Build starts a core on pool: the local backend in opts.LocalRoot (which
// must be set), and a River client with the workers unless opts.NoWorkers.
// Worker processes that tests start and kill use it too. Stop stops it.
func Build(ctx context.Context, pool *pgxpool.Pool, opts Options) (*Env, error) {
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	st := store.New(pool)
	a := auth.New(st, logger)
	if opts.Install != "" {
		if _, err := pool.Exec(ctx, "INSERT INTO install (install_id) VALUES ($1) ON CONFLICT DO NOTHING", opts.Install); err != nil {
			return nil, fmt.Errorf("install %s: %w", opts.Install, err)
		}
	}
	install, err := a.InstallID(ctx)
	if err != nil {
		return nil, err
	}
	lb, err := local.New(local.Config{ID: "local", Root: opts.LocalRoot, Host: opts.Host, ContentStore: opts.ContentStore, ContentCacheBytes: opts.ContentCacheBytes, MayFetch: hosts.MayFetch(st, "local"), Install: install, Logger: logger, NoSync: true, Price: opts.Price, Templates: opts.Templates,
		DiskImages: !opts.NoDiskImages, DiskBytes: cmp.Or(opts.DiskBytes, DiskBytes)})
	if err != nil {
		return nil, err
	}
	localBackend := snapshots.Backend{ID: "local", Kind: "local", Label: "this host", Snap: lb, Boxes: lb}
	if opts.Wrap != nil {
		localBackend = opts.Wrap(localBackend)
	}
	bes := append([]snapshots.Backend{localBackend}, opts.Extra...)
	core, err := snapshots.New(snapshots.Options{Store: st, Backends: bes, Install: install, Host: opts.Host, Logger: logger, Now: opts.Now, TaskSnooze: opts.TaskSnooze})
	if err != nil {
		return nil, err
	}
	sm, err := seams.New(core, seams.Options{Store: st, Logger: logger, Now: opts.Now, Redeem: opts.Redeem, Host: opts.Host})
	if err != nil {
		return nil, err
	}
	kp, bx, tk, rs, fk, sw := sm.Keeps, sm.Boxes, sm.Take, sm.Restores, sm.Forks, sm.Sweeps
	cont, ap, pics, hd := sm.Contents, sm.Approvals, sm.Pictures, sm.Heads
	if err := core.RegisterBackends(ctx); err != nil {
		return nil, err
	}
	if opts.NoTrash {
		st, err := core.Settings(ctx)
		if err != nil {
			return nil, err
		}
		st.TrashHours = 0
		if err := core.SaveSettings(ctx, snapshots.Owner(), st); err != nil {
			return nil, err
		}
	}
	if !opts.NoWorkers {
		sm.Hosts.RunsWorkers()
	}
	if err := sm.Hosts.Seen(ctx); err != nil {
		return nil, err
	}
	client, err := jobs.NewClient(pool, jobs.ClientOptions{Work: !opts.NoWorkers, Logger: logger, Host: opts.Host,
		Deps: jobs.Deps{Auth: a, Core: core, Sweeps: sw, Logger: logger, ManualHistory: true, Intervals: opts.Intervals, Hosts: sm.Hosts}})
	if err != nil {
		return nil, err
	}
	core.UseJobs(client)
	e := &Env{Pool: pool, Store: st, Auth: a, Core: core, Restores: rs, Take: tk, Keeps: kp, Tab: tab.New(st, core.Kernel, opts.Now, logger), Boxes: bx, Forks: fk, Sweeps: sw, Contents: cont, Approvals: ap, Pictures: pics, Client: client.Client, Jobs: client, Local: lb, Logger: logger, Install: install}
	e.Heads = hd
	e.BoxViews = sm.BoxViews
	e.Hosts = sm.Hosts
	e.Keeps = kp
	if !opts.NoWorkers {
		if err := client.Start(ctx); err != nil {
			return nil, err
		}
		e.stop = func() {
			sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_ = client.Stop(sctx)
		}
	}
	return e, nil
}

// Stop stops the env's River client and unmounts its local boxes' file
// systems.
func (e *Env) Stop() {
	if e.stop != nil {
		e.stop()
	}
	// Each local box is a file system of its own (a loop mount, as root):
	// unmounted, so the test's folder can be removed.
	if e.Local != nil {
		_ = local.UnmountAll(e.Local.Root())
	}
}

// Thread makes a thread and returns it with its agent's caller.
func (e *Env) Thread(t testing.TB, title string) (*snapshots.Thread, snapshots.Caller, string) {
	t.Helper()
	th, token, err := e.Boxes.CreateThread(context.Background(), snapshots.Owner(), title)
	if err != nil {
		t.Fatal(err)
	}
	return th, snapshots.Agent(th.ID), token
}

// Box makes an empty box on the local backend for caller: the person's
// machine, or, for an agent's caller, a box of its thread that the person
// puts there (an agent itself makes boxes only from box templates).
func (e *Env) Box(t testing.TB, c snapshots.Caller, name string) *snapshots.Box {
	t.Helper()
	req := snapshots.BoxRequest{Name: name, Backend: "local"}
	if c.Kind == snapshots.CallerAgent {
		req.Thread, c = c.Thread, snapshots.Owner()
	}
	b, err := e.Boxes.AcquireBox(context.Background(), c, req)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Wait waits for an operation to end, failing the test after a minute.
func (e *Env) Wait(t testing.TB, op *snapshots.Operation) *snapshots.Operation {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	got, err := e.Core.Wait(ctx, op.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.State == snapshots.OpRunning {
		t.Fatalf("operation %s (%s) still running at step %s after a minute", got.ID, got.Kind, got.Step)
	}
	return got
}
