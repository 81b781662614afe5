package operations

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// Presence is a working process's presence lock: a session advisory lock
// named after its River client ID, held on a connection of its own (outside
// the pool) for as long as the process works. River records that ID in
// attempted_by when the process fetches a job, and boxsnap_worker_alive
// (migration 00220) tells whether a live session holds the lock, so any
// live worker can tell a job whose process died, however recently it was
// fetched: Postgres lets a session's locks go the moment its connection
// ends, as it does the operations' own run locks.
//
// While it holds, it looks at its connection every interval (the recover
// interval; a lost connection is made again and the lock taken again) and
// recovers (Recover): it frees the sweeps a dead worker left running, so
// none keeps its next run out, and resumes the operations no live worker
// holds. Each working process does so on its own timer, so a dead worker's
// operations are resumed within the interval even when it was River's
// leader: the periodic recover job is queued by the leader only, and River
// elects another only once the dead leader's lease ran out (15 seconds).
type Presence struct {
	e     *Engine
	id    string
	every time.Duration
	mu    sync.Mutex
	conn  *pgx.Conn
	// ctx ends at Close, cutting a recover short.
	ctx  context.Context
	stop context.CancelFunc
	done chan struct{}
	once sync.Once
}

// PresenceApplication is the application_name of a presence lock's session.
const PresenceApplication = "boxsnap presence"

// Hold takes the presence lock of the worker named id (its River client's
// ID) and keeps it until Close; every is how often it looks again and
// recovers (the recover interval).
func (e *Engine) Hold(ctx context.Context, id string, every time.Duration) (*Presence, error) {
	p := &Presence{e: e, id: id, every: every, done: make(chan struct{})}
	if err := p.connect(ctx); err != nil {
		return nil, err
	}
	p.ctx, p.stop = context.WithCancel(context.Background())
	go p.keep()
	return p, nil
}

// ID is the worker's ID.
func (p *Presence) ID() string { return p.id }

func (p *Presence) connect(ctx context.Context) error {
	cfg := p.e.st.Pool.Config().ConnConfig.Copy()
	// Named, so a look at pg_locks can tell the presence locks from the
	// operations' own.
	cfg.RuntimeParams["application_name"] = PresenceApplication
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return fmt.Errorf("worker presence: %w", err)
	}
	got, err := p.e.st.WorkerHold(ctx, conn, p.id)
	if err == nil && !got {
		err = errors.New("another session holds this worker's presence lock")
	}
	if err != nil {
		_ = conn.Close(context.WithoutCancel(ctx))
		return fmt.Errorf("worker presence %s: %w", p.id, err)
	}
	p.mu.Lock()
	p.conn = conn
	p.mu.Unlock()
	return nil
}

func (p *Presence) keep() {
	defer close(p.done)
	t := time.NewTicker(p.every)
	defer t.Stop()
	for {
		select {
		case <-p.ctx.Done():
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(p.ctx, p.every)
		p.mu.Lock()
		conn := p.conn
		p.mu.Unlock()
		if conn == nil || conn.Ping(ctx) != nil {
			if conn != nil {
				_ = conn.Close(ctx)
			}
			p.mu.Lock()
			p.conn = nil
			p.mu.Unlock()
			if err := p.connect(ctx); err != nil {
				p.e.logger.Warn("this worker's presence lock is lost; other workers may resume its work", "worker", p.id, "err", err)
				cancel()
				continue
			}
			p.e.logger.Info("this worker's presence lock is held again", "worker", p.id)
		}
		cancel()
		// Its own deadline: resuming many operations may take longer
		// than a short interval.
		rctx, cancel := context.WithTimeout(p.ctx, max(p.every, recoverTimeout))
		if _, err := p.e.Recover(rctx); err != nil && p.ctx.Err() == nil {
			p.e.logger.Warn("resume the work a dead worker left", "err", err)
		}
		cancel()
	}
}

// recoverTimeout bounds one Recover of a presence's timer.
const recoverTimeout = 30 * time.Second

// Close lets the lock go: the worker is gone.
func (p *Presence) Close() {
	p.once.Do(func() {
		p.stop()
		<-p.done
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.conn != nil {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = p.conn.Close(ctx)
			p.conn = nil
		}
	})
}

// FreeDeadJobs makes the jobs other than operations' that a dead worker
// left running available again (JobsFreeDead); it answers their IDs.
// Operations' jobs are Recover's: they go on from their step.
func (e *Engine) FreeDeadJobs(ctx context.Context) ([]int64, error) {
	ids, err := e.st.JobsFreeDead(ctx, e.st.Pool)
	if err != nil {
		return nil, fmt.Errorf("free dead workers' jobs: %w", err)
	}
	if len(ids) > 0 {
		e.logger.Info("made the jobs a dead worker left running available again", "jobs", ids)
	}
	return ids, nil
}
