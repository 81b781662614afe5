// Command bucket measures the local backend with a content store (a real
// versitygw on loopback, the ledger in a private PostgreSQL) beside restic
// backup and rclone sync to the same server, on a copy of a real tree
// (/usr/share by default): the first take with shipping, an incremental
// take after 1 % of the files changed, and a fork on another host (its own
// folder, the same bucket and database) beside restic restore; then the
// first snapshot deleted and swept, and the packs' waste. Each figure
// is the median of the runs. bench/bucket/run.sh builds and runs it.
package main

import (
	"context"
	"flag"
	"fmt"
	"io/fs"
	"log"
	"log/slog"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/sys/unix"

	"github.com/boxsnap/boxsnap/bench/benchbucket"
	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/local"
	"github.com/boxsnap/boxsnap/providers/local/objstore/s3test"
)

const resticPass = "bench-only" // a throwaway repository's password

// withRclone runs rclone sync beside boxsnap and restic; its first sync
// is the longest step of a run.
var withRclone = true

// withImages gives each box a disk image of its own (-images).
var withImages bool

// logger is the backends' log: none, or every phase with -v.
var logger = slog.New(slog.DiscardHandler)

func main() {
	work := flag.String("dir", "/tmp/boxsnap-bench-bucket", "work folder (its contents are deleted)")
	src := flag.String("tree", "/usr/share", "the tree to copy and measure on")
	runs := flag.Int("runs", 1, "runs; each figure is the median")
	verbose := flag.Bool("v", false, "log each take's and shipping's phases")
	flag.BoolVar(&withRclone, "rclone", true, "run rclone sync beside (false: only boxsnap and restic)")
	flag.BoolVar(&withImages, "images", false, "give each box a disk image of its own, as boxsnap does by default as root (the restore then copies from the cache)")
	flag.StringVar(&profileDir, "cpuprofile", "", "write a CPU profile of each fork and restore onto another host into this folder")
	flag.Parse()
	if *verbose {
		logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	if err := run(*work, *src, *runs); err != nil {
		log.Fatal(err)
	}
}

type figures map[string][]float64

func (f figures) add(k string, d time.Duration) {
	f[k] = append(f[k], d.Seconds())
	fmt.Printf("  (%s: %.2f s)\n", k, d.Seconds())
}

// addCPU records a CPU time, printed beside the wall time before it.
func (f figures) addCPU(k string, d time.Duration) {
	f[k] = append(f[k], d.Seconds())
	fmt.Printf("  (%s: %.2f s)\n", k, d.Seconds())
}

func (f figures) median(k string) float64 {
	v := append([]float64(nil), f[k]...)
	if len(v) == 0 {
		return math.NaN()
	}
	sort.Float64s(v)
	return v[len(v)/2]
}

// env is one run's servers and folders. work, srv and pool name the
// servers' parts the measuring code reaches.
type env struct {
	work, tree string
	// run counts the runs from 0: it turns the order of the restores.
	run     int
	servers *benchbucket.Servers
	srv     *s3test.Server
	pool    *pgxpool.Pool
}

func run(work, src string, runs int) error {
	f := figures{}
	var files int
	var bytes int64
	for i := range runs {
		e, err := setUp(work, src)
		if err != nil {
			return err
		}
		e.run = i
		fmt.Printf("run %d, load %s\n", i+1, loadAvg())
		files, bytes, err = e.once(f)
		if err != nil {
			if out, rerr := os.ReadFile(e.srv.Log); rerr == nil {
				fmt.Fprintf(os.Stderr, "versitygw's log:\n%s\n", lastBytes(out))
			}
		}
		e.tearDown()
		if err != nil {
			return fmt.Errorf("run %d: %w", i+1, err)
		}
	}
	fmt.Printf("load at the end: %s\n", loadAvg())
	fmt.Printf("tree: a copy of %s, %d files, %.0f MB; versitygw on loopback; %d run(s), medians\n", src, files, float64(bytes)/1e6, runs)
	for _, k := range []string{"boxsnap first take", "restic first backup", "rclone first sync",
		"boxsnap take after 1% churn", "restic backup after 1% churn", "rclone sync after 1% churn",
		"boxsnap fork on another host", "boxsnap restore on another host", "restic restore"} {
		fmt.Printf("  %-32s %8.2f s\n", k, f.median(k))
	}
	fmt.Printf("incremental: restic / boxsnap = %.1fx, rclone / boxsnap = %.1fx\n",
		f.median("restic backup after 1% churn")/f.median("boxsnap take after 1% churn"),
		f.median("rclone sync after 1% churn")/f.median("boxsnap take after 1% churn"))
	fmt.Printf("onto another host: restic restore / boxsnap fork = %.2fx, restic restore / boxsnap restore = %.2fx\n",
		f.median("restic restore")/f.median("boxsnap fork on another host"), f.median("restic restore")/f.median("boxsnap restore on another host"))
	fmt.Println("CPU time onto another host (its own; versitygw's serving it), medians:")
	for _, k := range []string{"boxsnap fork on another host", "boxsnap restore on another host", "restic restore"} {
		fmt.Printf("  %-32s %8.2f s; versitygw %.2f s\n", k, f.median(k+" cpu"), f.median(k+" server cpu"))
	}
	fmt.Printf("CPU onto another host, own and versitygw's: restic restore / boxsnap restore = %.2fx\n",
		(f.median("restic restore cpu")+f.median("restic restore server cpu"))/
			(f.median("boxsnap restore on another host cpu")+f.median("boxsnap restore on another host server cpu")))
	return nil
}

func setUp(work, src string) (*env, error) {
	srv, err := benchbucket.Start(context.Background(), work, "restic", "rclone")
	if err != nil {
		return nil, err
	}
	srv.DiskImages = withImages
	return &env{work: work, tree: src, servers: srv, srv: srv.S3, pool: srv.Pool}, nil
}

func (e *env) tearDown() { e.servers.Stop() }

func (e *env) backend(name string) (*local.Backend, error) { return e.servers.Backend(name, logger) }

// once runs each tool once, on a fresh copy of the tree in a box's folder.
func (e *env) once(f figures) (int, int64, error) {
	ctx := context.Background()
	b, err := e.backend("host-a")
	if err != nil {
		return 0, 0, err
	}
	g, err := b.Acquire(ctx, providers.BoxSpec{Box: providers.BoxIdentity{ID: "bench", Kind: "linux"}})
	if err != nil {
		return 0, 0, err
	}
	dir := b.BoxDir(g)
	// The tree goes in a folder of the box's, so the box's own folder
	// (and its identity marker) stays as the backend made it.
	if out, err := exec.Command("cp", "-a", e.tree, filepath.Join(dir, "tree")).CombinedOutput(); err != nil {
		return 0, 0, fmt.Errorf("copy the tree: %v: %s", err, out)
	}
	// Only the tree's files are measured and churned: the box's identity
	// marker (.boxsnap/identity) is a file of its folder too, and a line
	// appended to it leaves a box whose snapshots cannot be forked.
	paths, size, err := regularFiles(filepath.Join(dir, "tree"))
	if err != nil {
		return 0, 0, err
	}
	take := func(key string) error {
		start := time.Now()
		_, err := b.Snapshot(ctx, g, providers.SnapshotTake{Label: providers.Label{Box: g.Ref}}, nil)
		f.add(key, time.Since(start))
		return err
	}
	if err := take("boxsnap first take"); err != nil {
		return 0, 0, err
	}
	if err := e.others(f, dir, "first backup", "first sync"); err != nil {
		return 0, 0, err
	}
	if err := churn(paths); err != nil {
		return 0, 0, err
	}
	if err := take("boxsnap take after 1% churn"); err != nil {
		return 0, 0, err
	}
	if err := e.others(f, dir, "backup after 1% churn", "sync after 1% churn"); err != nil {
		return 0, 0, err
	}
	if err := e.restores(f, b, g); err != nil {
		return 0, 0, err
	}
	return len(paths), size, e.waste(b, g)
}

// restores forks the last snapshot on another host (its own folder, an
// empty cache: its manifest, label and every object it names fetched from
// the bucket, each checked by hash), restores the box onto a third host
// (its folder made empty there, then the snapshot's rollback, as a move
// does) and restores restic's latest into an empty folder, each run
// starting with another of the three.
func (e *env) restores(f figures, a *local.Backend, g providers.Guest) error {
	ctx := context.Background()
	held, err := a.HeldSnapshots(ctx)
	if err != nil || len(held) == 0 {
		return fmt.Errorf("list the snapshots: %v", err)
	}
	last := held[len(held)-1].Ref
	other, err := e.backend("host-b")
	if err != nil {
		return err
	}
	third, err := e.backend("host-c")
	if err != nil {
		return err
	}
	moved, err := third.Acquire(ctx, providers.BoxSpec{Box: providers.BoxIdentity{ID: g.Ref, Kind: "linux"}})
	if err != nil {
		return fmt.Errorf("the box on a third host: %w", err)
	}
	// Each step's CPU time is counted beside its wall time: boxsnap's
	// own (this process's), restic's (its process's) and versitygw's,
	// which serves both.
	timed := func(key string, own func() time.Duration, fn func() error) error {
		start, cpu, srv := time.Now(), own(), cpuOf(e.srv.Pid())
		if err := fn(); err != nil {
			return err
		}
		f.add(key, time.Since(start))
		f.addCPU(key+" cpu", own()-cpu)
		f.addCPU(key+" server cpu", cpuOf(e.srv.Pid())-srv)
		return nil
	}
	var resticCPU time.Duration
	steps := []func() error{
		func() error {
			return timed("boxsnap fork on another host", selfCPU, func() error {
				return profiled(fmt.Sprintf("fork-%d.pprof", e.run+1), func() error {
					if _, err := other.ForkSnapshot(ctx, last, providers.BoxIdentity{ID: "forked", Kind: "linux"}, nil); err != nil {
						return fmt.Errorf("fork on the other host: %w", err)
					}
					return nil
				})
			})
		},
		func() error {
			return timed("boxsnap restore on another host", selfCPU, func() error {
				return profiled(fmt.Sprintf("restore-%d.pprof", e.run+1), func() error {
					if _, err := third.RestoreSnapshot(ctx, moved, last, providers.StepRollback, nil); err != nil {
						return fmt.Errorf("restore on the third host: %w", err)
					}
					return nil
				})
			})
		},
		func() error {
			return timed("restic restore", func() time.Duration { return resticCPU }, func() error {
				return e.resticTimed(&resticCPU, "restore", "latest", "--target", filepath.Join(e.work, "restic-restore"))
			})
		},
	}
	// Each run starts with another of the three: the first to read the
	// bucket's files after the takes may find fewer in the page cache.
	// Each starts with the host's dirty pages written out, so none pays
	// for the writes of the one before it (here the first of three once
	// took about 4 times the third's time).
	for i := range steps {
		unix.Sync()
		if err := steps[(i+e.run)%len(steps)](); err != nil {
			return err
		}
	}
	return nil
}

// others runs restic backup and rclone sync of dir, timing each.
func (e *env) others(f figures, dir, resticKey, rcloneKey string) error {
	if resticKey == "first backup" {
		if err := e.restic("init"); err != nil {
			return err
		}
	}
	start := time.Now()
	if err := e.restic("backup", "--quiet", dir); err != nil {
		return err
	}
	f.add("restic "+resticKey, time.Since(start))
	if !withRclone {
		return nil
	}
	start = time.Now()
	cmd := exec.Command("rclone", "sync", "--skip-links", "--transfers", "8", dir, "bs:rclone")
	cmd.Env = append(plainEnv(), "RCLONE_CONFIG_BS_TYPE=s3", "RCLONE_CONFIG_BS_PROVIDER=Other",
		"RCLONE_CONFIG_BS_ENDPOINT="+e.srv.Endpoint, "RCLONE_CONFIG_BS_ACCESS_KEY_ID="+e.srv.AccessKey,
		"RCLONE_CONFIG_BS_SECRET_ACCESS_KEY="+e.srv.SecretKey, "RCLONE_CONFIG_BS_REGION=us-east-1")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("rclone sync: %v: %s", err, lastBytes(out))
	}
	f.add("rclone "+rcloneKey, time.Since(start))
	return nil
}

func (e *env) restic(args ...string) error {
	return e.resticTimed(nil, args...)
}

// resticTimed runs restic, adding the CPU time it spent to cpu (when not
// nil).
func (e *env) resticTimed(cpu *time.Duration, args ...string) error {
	cmd := exec.Command("restic", args...)
	cmd.Env = append(plainEnv(), "RESTIC_REPOSITORY=s3:"+e.srv.Endpoint+"/restic", "RESTIC_PASSWORD="+resticPass,
		"AWS_ACCESS_KEY_ID="+e.srv.AccessKey, "AWS_SECRET_ACCESS_KEY="+e.srv.SecretKey, "RESTIC_CACHE_DIR="+filepath.Join(e.work, "restic-cache"))
	out, err := cmd.CombinedOutput()
	if cpu != nil && cmd.ProcessState != nil {
		*cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	if err != nil {
		return fmt.Errorf("restic %s: %v: %s", args[0], err, lastBytes(out))
	}
	return nil
}

// plainEnv is the environment without AWS_CA_BUNDLE: the server is plain
// HTTP on loopback, and rclone refuses a CA bundle on an HTTP transport.
func plainEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "AWS_CA_BUNDLE=") {
			out = append(out, kv)
		}
	}
	return out
}

// regularFiles lists dir's regular files, in order, and their bytes.
func regularFiles(dir string) ([]string, int64, error) {
	var paths []string
	var size int64
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		size += fi.Size()
		paths = append(paths, p)
		return nil
	})
	return paths, size, err
}

// churn changes 1 % of the files: every hundredth gets a line appended.
func churn(paths []string) error {
	for i := 0; i < len(paths); i += 100 {
		fh, err := os.OpenFile(paths[i], os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(fh, "churned %d\n", time.Now().UnixNano())
		if cerr := fh.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func lastBytes(b []byte) []byte {
	if len(b) > 600 {
		return b[len(b)-600:]
	}
	return b
}
