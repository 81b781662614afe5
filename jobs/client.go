package jobs

import (
	"fmt"
	"log/slog"
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
}

// NewClient makes boxsnap's one River client on pool.
func NewClient(pool *pgxpool.Pool, opts ClientOptions) (*river.Client[pgx.Tx], error) {
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
		cfg.PeriodicJobs = Periodic(opts.Deps)
	}
	client, err := river.NewClient(riverpgxv5.New(pool), cfg)
	if err != nil {
		return nil, fmt.Errorf("river client: %w", err)
	}
	return client, nil
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
