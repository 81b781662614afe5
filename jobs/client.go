package jobs

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/boxsnap/boxsnap/app/operations"
)

// Queue names. Operations run on their own queue so a slow housekeeping run
// never delays a box's operation.
const (
	QueueOperations  = operations.Queue
	QueueMaintenance = river.QueueDefault
)

// Fetch timings: River's defaults (100 ms cooldown, 1 s poll) add latency
// between a box's back-to-back operations. The cooldown is River's
// smallest (FetchCooldownMin): it is also how long River's client stays
// silent after one insert notification, and a job inserted in that window
// waits for a fetch that another trigger or the poll starts
// (BenchmarkBoxSnapshot measures it).
const (
	fetchCooldown     = time.Millisecond
	fetchPollInterval = 50 * time.Millisecond
)

// rescueStuckJobsAfter is River's RescueStuckJobsAfter (its default is an
// hour); it must be at least River's JobTimeout (a minute).
const rescueStuckJobsAfter = 5 * time.Minute

// ClientOptions configure the River client.
type ClientOptions struct {
	// Work runs the workers; false makes an insert-only client (serve with
	// --workers=false).
	Work   bool
	Deps   Deps
	Logger *slog.Logger
	// Extra registers more workers; tests use it.
	Extra func(*river.Workers)
	// MaxWorkers is the operations queue's concurrency; 0 sizes it to the
	// pool (operationWorkers).
	MaxWorkers int
	// Host is the host this process runs on: a working client listens on
	// its queue (operations.HostQueue) too, where the operations of the
	// boxes it owns go. Empty: the machine's hostname, as the local
	// backend's.
	Host string
}

// Client is boxsnap's River client and, in a working process, its
// presence: the lock by which other workers tell that this process lives
// (operations.Presence), let go when the client stops.
type Client struct {
	*river.Client[pgx.Tx]
	presence *operations.Presence
}

// Stop stops River as river.Client.Stop does and, once its running jobs
// finished, lets the presence go.
func (c *Client) Stop(ctx context.Context) error {
	err := c.Client.Stop(ctx)
	if err == nil {
		c.release()
	}
	return err
}

// StopAndCancel stops River, cancelling its running jobs, and lets the
// presence go.
func (c *Client) StopAndCancel(ctx context.Context) error {
	err := c.Client.StopAndCancel(ctx)
	c.release()
	return err
}

func (c *Client) release() {
	if c.presence != nil {
		c.presence.Close()
	}
}

// WorkerID is this working client's River ID, the name of its presence
// lock; empty for an insert-only client.
func (c *Client) WorkerID() string {
	if c.presence == nil {
		return ""
	}
	return c.presence.ID()
}

// NewClient makes boxsnap's one River client on pool. A working client is
// given an ID of its own, and holds its presence lock from now on (before
// it fetches anything): a job it fetches names it in attempted_by, and a
// live worker's Recover resumes that job's operation once the lock is gone.
func NewClient(pool *pgxpool.Pool, opts ClientOptions) (*Client, error) {
	cfg := &river.Config{
		Logger:            opts.Logger,
		FetchCooldown:     fetchCooldown,
		FetchPollInterval: fetchPollInterval,
		// River's rescuer frees a job a killed worker left running once it
		// ran this long and past its worker's timeout: a sweep (River's
		// one-minute JobTimeout) after 5 minutes, so a stuck sweep's row
		// never keeps its next run out for River's default hour. An
		// operation's job (a 6-hour timeout) is left to the engine's
		// Recover, which resumes it within the recover interval.
		RescueStuckJobsAfter: rescueStuckJobsAfter,
	}
	if opts.Work {
		if n := pool.Config().MaxConns; n < MinPoolConnections {
			return nil, fmt.Errorf("the database pool has %d connections; boxsnap's workers need at least %d (set pool_max_conns=%d or more in DATABASE_URL)", n, MinPoolConnections, MinPoolConnections)
		}
		workers := river.NewWorkers()
		if err := Register(workers, opts.Deps); err != nil {
			return nil, err
		}
		if opts.Extra != nil {
			opts.Extra(workers)
		}
		max := opts.MaxWorkers
		if max <= 0 {
			max = operationWorkers(pool)
		}
		cfg.Workers = workers
		cfg.Queues = map[string]river.QueueConfig{
			QueueOperations:  {MaxWorkers: max},
			QueueMaintenance: {MaxWorkers: 4},
		}
		if opts.Host == "" {
			// The local backend's default host is the machine's hostname
			// too, so its boxes' queue is this one.
			opts.Host, _ = os.Hostname()
		}
		if opts.Host != "" {
			// The shared queue then holds the operations of boxes no host
			// owns (Docker, Proxmox, QEMU), the host's queue those of its
			// local boxes; with one host one of them is mostly idle.
			cfg.Queues[operations.HostQueue(opts.Host)] = river.QueueConfig{MaxWorkers: max}
		}
		cfg.PeriodicJobs = Periodic(opts.Deps)
	}
	if opts.Work && opts.Deps.Core != nil {
		cfg.ID = workerID()
	}
	client, err := river.NewClient(riverpgxv5.New(pool), cfg)
	if err != nil {
		return nil, fmt.Errorf("river client: %w", err)
	}
	c := &Client{Client: client}
	if cfg.ID != "" {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		every := opts.Deps.Intervals.orDefaults().Recover
		if c.presence, err = opts.Deps.Core.Engine().Hold(ctx, cfg.ID, every); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// workerID is a River client ID no other process has: the host, the
// process and a random part (River allows 100 characters).
func workerID() string {
	host, _ := os.Hostname()
	if len(host) > 60 {
		host = host[:60]
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return fmt.Sprintf("%s_%d_%s", host, os.Getpid(), hex.EncodeToString(b))
}

// operationWorkers is how many operations run at once on pool: a running
// operation holds one connection for its advisory lock and uses another for
// its queries (a job snoozed on its provider task holds none), River keeps
// a few of its own, and the engine one to hear the operations' ends while
// anyone waits, so the pool's size bounds it; at most maxOperationWorkers.
func operationWorkers(pool *pgxpool.Pool) int {
	n := (int(pool.Config().MaxConns) - riverConnections - listenerConnections) / 2
	if n < 1 {
		n = 1
	}
	if n > maxOperationWorkers {
		n = maxOperationWorkers
	}
	return n
}

// Connections River keeps for itself (its LISTEN connection, the
// producer's fetches, the completer, the leader's maintenance), and the most
// operations at once. With fewer than MinPoolConnections, River's completer
// and a running operation can each wait for the other's connection: a test
// with worker processes on pgxpool's default of 4 hung that way.
const (
	riverConnections    = 4
	listenerConnections = 1
	maxOperationWorkers = 20
	// MinPoolConnections is the smallest pool a working process accepts: two
	// operations at once beside River's own and the engine's listener.
	MinPoolConnections = 9
)
