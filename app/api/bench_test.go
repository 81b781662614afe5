package api_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/boxsnap/boxsnap/app/api"
	"github.com/boxsnap/boxsnap/app/auth"
	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/dbtest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/seams"
	"github.com/boxsnap/boxsnap/app/snapshots/tab"
	"github.com/boxsnap/boxsnap/app/store"
	"github.com/boxsnap/boxsnap/jobs"
	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/local"
)

// The benchmark's shape: takes spread over benchBoxes
// boxes by benchCallers agents at once (and by one, to tell queueing under
// concurrency from the path's own latency).
const (
	benchBoxes   = 100
	benchCallers = 8
	benchFiles   = 20 // files in each box
)

// timedBackend is the local backend with its Snapshot calls timed, so the
// core's own overhead per take is the tool's time minus the backend's. It
// is registered as a backend in this benchmark only.
type timedBackend struct {
	providers.Backend
	mu   sync.Mutex
	took map[string]time.Duration // by snapshot ID
}

func (t *timedBackend) Snapshot(ctx context.Context, g providers.Guest, take providers.SnapshotTake, rec providers.Recorder) (providers.SnapshotTaken, error) {
	start := time.Now()
	res, err := t.Backend.Snapshot(ctx, g, take, rec)
	d := time.Since(start)
	t.mu.Lock()
	t.took[take.Label.Snapshot] = d
	t.mu.Unlock()
	return res, err
}

// BenchmarkBoxSnapshot measures, per box_snapshot call of an agent: the
// time from the request to its operation's job starting (the operation's
// started_at, which the worker sets as it begins), and the core's own
// overhead (the whole call minus the backend's Snapshot). Run it as
//
//	go test ./app/api -run '^$' -bench BenchmarkBoxSnapshot -benchtime 1000x
func BenchmarkBoxSnapshot(b *testing.B) {
	b.Run(fmt.Sprintf("callers=%d", benchCallers), func(b *testing.B) { benchTakes(b, benchCallers) })
	b.Run("callers=1", func(b *testing.B) { benchTakes(b, 1) })
}

func benchTakes(b *testing.B, callers int) {
	lb, err := local.New(local.Config{ID: "timed", Root: b.TempDir(), Install: "bench", NoSync: true,
		Logger: discardLogger()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = local.UnmountAll(lb.Root()) })
	timed := &timedBackend{Backend: lb, took: map[string]time.Duration{}}
	tr := &queryCounter{}
	ping := &pingWorker{took: make(chan time.Duration, 1024)}
	e := benchEnv(b, snapshots.Backend{ID: "timed", Kind: "local", Label: "this host, timed", Snap: timed, Boxes: lb}, tr, ping)
	ctx := context.Background()
	// River's own insert-to-work time on the same database, client and
	// queue, with the same callers inserting at once: the baseline the
	// take's request-to-job-start is compared with.
	baseline := riverBaseline(b, e, ping, callers)
	st, _ := e.Core.Settings(ctx)
	st.PerBox = snapshots.MaxPerBox // 10 takes a box: none replaces another
	if err := e.Core.SaveSettings(ctx, snapshots.Owner(), st); err != nil {
		b.Fatal(err)
	}
	r := chi.NewRouter()
	r.Mount("/api/v1", api.New(e.APIOptions()))
	srv := httptest.NewServer(r)
	defer srv.Close()
	ev := &env{Env: e, srv: srv}

	tokens := make([]string, callers)
	boxes := make([][]string, callers)
	for g := range callers {
		var c snapshots.Caller
		tokens[g], c = ev.agent(b, fmt.Sprintf("Bench %d", g))
		for i := g; i < benchBoxes; i += callers {
			name := fmt.Sprintf("bench-%03d", i)
			bx, err := e.Boxes.AcquireBox(ctx, snapshots.Owner(), snapshots.BoxRequest{Name: name, Backend: "timed", Thread: c.Thread})
			if err != nil {
				b.Fatal(err)
			}
			dir := lb.BoxDir(providers.Guest{Ref: bx.GuestRef})
			for f := range benchFiles {
				if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%02d.txt", f)), []byte(fmt.Sprintf("file %d of %s\n", f, name)), 0o644); err != nil {
					b.Fatal(err)
				}
			}
			boxes[g] = append(boxes[g], name)
		}
	}

	type sample struct {
		op, snapshot string
		start        time.Time
		total        time.Duration
	}
	samples := make([]sample, b.N)
	var next atomic.Int64
	var wg sync.WaitGroup
	tr.start()
	b.ResetTimer()
	for g := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; ; k++ {
				i := int(next.Add(1)) - 1
				if i >= b.N {
					return
				}
				box := boxes[g][k%len(boxes[g])]
				start := time.Now()
				a := ev.call(b, "POST", "/tools/box_snapshot", tokens[g], map[string]any{"box": box})
				total := time.Since(start)
				if a.Status != 200 {
					b.Errorf("take %d: %d %s", i, a.Status, a.Raw)
					return
				}
				samples[i] = sample{op: a.str("operation"), snapshot: a.str("snapshot"), start: start, total: total}
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	ours, rivers := tr.stop()
	if b.Failed() {
		return
	}

	var jobStart, attempted, overhead, backend, total, admit, queue, run, reply []time.Duration
	for _, s := range samples {
		var created, started, ended, att time.Time
		err := e.Pool.QueryRow(ctx, `SELECT o.created_at, o.started_at, o.ended_at, j.attempted_at FROM operations o
			JOIN river_job j ON j.args->>'op' = o.id WHERE o.id = $1 ORDER BY j.id LIMIT 1`, s.op).Scan(&created, &started, &ended, &att)
		if err != nil {
			b.Fatal(err)
		}
		timed.mu.Lock()
		bt, ok := timed.took[s.snapshot]
		timed.mu.Unlock()
		if !ok {
			b.Fatalf("no backend time for %s", s.snapshot)
		}
		jobStart = append(jobStart, started.Sub(s.start))
		attempted = append(attempted, att.Sub(s.start))
		backend = append(backend, bt)
		total = append(total, s.total)
		overhead = append(overhead, s.total-bt)
		admit = append(admit, created.Sub(s.start))
		queue = append(queue, started.Sub(created))
		run = append(run, ended.Sub(started)-bt)
		reply = append(reply, s.start.Add(s.total).Sub(ended))
	}
	report := func(name string, ds []time.Duration) {
		sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
		p := func(q float64) float64 { return float64(ds[int(q*float64(len(ds)-1))].Microseconds()) / 1000 }
		b.ReportMetric(p(0.5), name+"-p50-ms")
		b.ReportMetric(p(0.99), name+"-p99-ms")
	}
	report("river-baseline", baseline)
	report("job-start", jobStart)
	b.ReportMetric(float64(jobStart[len(jobStart)/2])/float64(baseline[len(baseline)/2]), "job-start/river-p50-x")
	// Every query on the pool while the takes ran, per take: boxsnap's own
	// (the request, the admission, the run, the end, the waits' reads) and
	// River's (its inserts, fetches and completions).
	b.ReportMetric(float64(ours)/float64(b.N), "queries/take")
	b.ReportMetric(float64(rivers)/float64(b.N), "river-queries/take")
	b.ReportMetric(float64(tr.trips.Load())/float64(b.N), "round-trips/take")
	b.Logf("boxsnap's queries in %d takes, by name:\n%s", b.N, strings.Join(tr.names(), "\n"))
	report("river-attempted", attempted)
	report("overhead", overhead)
	report("backend", backend)
	report("total", total)
	// Where the overhead goes: the request to the operation's row, the row
	// to its job's start, the run without the backend, the end to the
	// answer.
	report("admit", admit)
	report("queue", queue)
	report("run-core", run)
	report("reply", reply)
}

// benchPoolConns is the benchmark's pool size: boot's (app/boot's
// poolConnections, unexported there), so River's operation workers, which
// the jobs client sizes to the pool, are as many as boxsnap runs with (20).
const benchPoolConns = 45

// benchEnv is coretest.New's running core, on a pool the size of boot's.
func benchEnv(b *testing.B, be snapshots.Backend, tr *queryCounter, ping *pingWorker) *coretest.Env {
	ctx := context.Background()
	cfg, err := pgxpool.ParseConfig(dbtest.NewDSN(b) + fmt.Sprintf(" pool_max_conns=%d", benchPoolConns))
	if err != nil {
		b.Fatal(err)
	}
	cfg.ConnConfig.Tracer = tr
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(pool.Close)
	logger := discardLogger()
	st := store.New(pool)
	a := auth.New(st, logger)
	install, err := a.InstallID(ctx)
	if err != nil {
		b.Fatal(err)
	}
	core, err := snapshots.New(snapshots.Options{Store: st, Backends: []snapshots.Backend{be}, Install: install, Logger: logger})
	if err != nil {
		b.Fatal(err)
	}
	sm, err := seams.New(core, seams.Options{Store: st, Logger: logger})
	if err != nil {
		b.Fatal(err)
	}
	if err := core.RegisterBackends(ctx); err != nil {
		b.Fatal(err)
	}
	client, err := jobs.NewClient(pool, jobs.ClientOptions{Work: true, Logger: logger, Deps: jobs.Deps{Auth: a, Core: core, Sweeps: sm.Sweeps, Logger: logger, ManualHistory: true},
		Extra: func(w *river.Workers) { river.AddWorker(w, ping) }})
	if err != nil {
		b.Fatal(err)
	}
	core.UseJobs(client)
	if err := client.Start(ctx); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = client.Stop(sctx)
	})
	return &coretest.Env{Pool: pool, Store: st, Auth: a, Core: core, Restores: sm.Restores, Take: sm.Take, Keeps: sm.Keeps, Tab: tab.New(st, core.Kernel, nil, logger), Boxes: sm.Boxes, Forks: sm.Forks, Sweeps: sm.Sweeps, Contents: sm.Contents, Approvals: sm.Approvals, Pictures: sm.Pictures, Heads: sm.Heads, Client: client.Client, Jobs: client, Logger: logger, Install: install}
}

// queryCounter is a pgx tracer that counts the queries sent while it
// counts: boxsnap's own, and River's (isRivers), each statement of a batch
// as one query; and, apart, boxsnap's round trips (a batch is one) and its
// queries by name (sqlc's name, or the statement's start).
type queryCounter struct {
	on           atomic.Bool
	ours, rivers atomic.Int64
	trips        atomic.Int64 // boxsnap's
	mu           sync.Mutex
	byName       map[string]int64
}

func (q *queryCounter) start() {
	q.ours.Store(0)
	q.rivers.Store(0)
	q.trips.Store(0)
	q.mu.Lock()
	q.byName = map[string]int64{}
	q.mu.Unlock()
	q.on.Store(true)
}

func (q *queryCounter) stop() (int64, int64) {
	q.on.Store(false)
	return q.ours.Load(), q.rivers.Load()
}

// names are boxsnap's queries by name, most sent first.
func (q *queryCounter) names() []string {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := make([]string, 0, len(q.byName))
	for n := range q.byName {
		out = append(out, n)
	}
	sort.Slice(out, func(i, j int) bool {
		if q.byName[out[i]] != q.byName[out[j]] {
			return q.byName[out[i]] > q.byName[out[j]]
		}
		return out[i] < out[j]
	})
	for i, n := range out {
		out[i] = fmt.Sprintf("%6d %s", q.byName[n], n)
	}
	return out
}

func (q *queryCounter) count(sql string) {
	if !q.on.Load() {
		return
	}
	if isRivers(sql) {
		q.rivers.Add(1)
		return
	}
	q.ours.Add(1)
	name := strings.TrimSpace(sql)
	if rest, ok := strings.CutPrefix(name, "-- name: "); ok {
		name, _, _ = strings.Cut(rest, " ")
	} else if len(name) > 50 {
		name = name[:50]
	}
	q.mu.Lock()
	q.byName[name]++
	q.mu.Unlock()
}

// isRivers says whether a statement is River's: it names a river_ table or
// function, or it is River's insert notification (pg_notify, named
// PGNotifyMany in River's driver).
func isRivers(sql string) bool {
	return strings.Contains(sql, "river_") || strings.HasPrefix(strings.TrimSpace(sql), "-- name: PGNotifyMany ")
}

// TraceQueryStart counts one query, one round trip.
func (q *queryCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	if q.on.Load() && !isRivers(d.SQL) {
		q.trips.Add(1)
	}
	q.count(d.SQL)
	return ctx
}

// TraceQueryEnd does nothing.
func (q *queryCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// TraceBatchStart counts a batch of boxsnap's as one round trip.
func (q *queryCounter) TraceBatchStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceBatchStartData) context.Context {
	if q.on.Load() && d.Batch != nil && len(d.Batch.QueuedQueries) > 0 && !isRivers(d.Batch.QueuedQueries[0].SQL) {
		q.trips.Add(1)
	}
	return ctx
}

// TraceBatchQuery counts each statement of a batch as one query.
func (q *queryCounter) TraceBatchQuery(_ context.Context, _ *pgx.Conn, d pgx.TraceBatchQueryData) {
	q.count(d.SQL)
}

// TraceBatchEnd does nothing.
func (q *queryCounter) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

// pingArgs is a job that does nothing: River's own baseline.
type pingArgs struct {
	At time.Time `json:"at"`
}

func (pingArgs) Kind() string { return "bench-ping" }

func (pingArgs) InsertOpts() river.InsertOpts { return river.InsertOpts{Queue: jobs.QueueOperations} }

// pingWorker says how long after its insert began each ping started.
type pingWorker struct {
	river.WorkerDefaults[pingArgs]
	took chan time.Duration
}

func (w *pingWorker) Work(ctx context.Context, job *river.Job[pingArgs]) error {
	w.took <- time.Since(job.Args.At)
	return nil
}

// riverBaselineJobs is how many no-op jobs the baseline times.
const riverBaselineJobs = 400

// riverBaseline times River alone on the benchmark's client: callers
// goroutines each insert a no-op job in its own transaction (as an
// admission does) and wait for a worker to start one; each sample is the
// time from before a job's insert to its worker's start.
func riverBaseline(b *testing.B, e *coretest.Env, ping *pingWorker, callers int) []time.Duration {
	ctx := context.Background()
	out := make([]time.Duration, 0, riverBaselineJobs)
	var mu sync.Mutex
	var wg sync.WaitGroup
	var next atomic.Int64
	for range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= riverBaselineJobs {
				start := time.Now()
				err := store.InTx(ctx, e.Pool, func(tx pgx.Tx) error {
					_, err := e.Client.InsertTx(ctx, tx, pingArgs{At: start}, nil)
					return err
				})
				if err != nil {
					b.Error(err)
					return
				}
				took := <-ping.took
				mu.Lock()
				out = append(out, took)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return out
}
