package operations

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// waitRecheck bounds how long a wait trusts the notification alone: it
// reads the operation again at least this often.
const waitRecheck = time.Second

// Wait waits until the operation ends or ctx does, and returns it as it is
// then. Every wait of this process shares one LISTEN connection for the
// ends; it reads the operation again at least every second besides.
func (e *Engine) Wait(ctx context.Context, id string) (*Operation, error) {
	// The reads are not cut by ctx: ctx bounds the wait, and the answer is
	// the operation as it is when the wait ends.
	read := func() (*Operation, error) {
		op, err := e.ByID(context.WithoutCancel(ctx), e.st.Pool, id)
		if err != nil {
			return nil, fmt.Errorf("read operation %s: %w", id, err)
		}
		return op, nil
	}
	ended, stop := e.ends.subscribe(ctx, id)
	defer stop()
	tick := time.NewTimer(waitRecheck)
	defer tick.Stop()
	for {
		op, err := read()
		if err != nil || op.State != Running || ctx.Err() != nil {
			return op, err
		}
		tick.Reset(waitRecheck)
		select {
		case <-ctx.Done():
		case <-ended:
		case <-tick.C:
		}
	}
}

// Listening reports how many callers wait now and whether the listener
// holds its connection; tests read it.
func (e *Engine) Listening() (waiters int, connected bool) {
	return e.ends.state()
}

// listener is the process's one LISTEN connection for the operations' ends,
// held while anyone waits and given back to the pool when nobody does; it
// fans each end out to the callers waiting for that operation.
type listener struct {
	pool   *pgxpool.Pool
	logger *slog.Logger

	mu      sync.Mutex
	waiting map[string]map[chan struct{}]struct{}
	n       int
	run     *listenRun
}

// listenRun is one spell of holding the connection.
type listenRun struct {
	cancel    context.CancelFunc
	ready     chan struct{} // closed once LISTEN is in place, or failed
	connected bool
}

func newListener(pool *pgxpool.Pool, logger *slog.Logger) *listener {
	return &listener{pool: pool, logger: logger, waiting: map[string]map[chan struct{}]struct{}{}}
}

// subscribe registers a wait for id's end; the channel receives when a
// notification for id arrives. It returns once the listener listens (or
// could not), so an end after it is never missed but by the recheck.
func (l *listener) subscribe(ctx context.Context, id string) (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	l.mu.Lock()
	if l.waiting[id] == nil {
		l.waiting[id] = map[chan struct{}]struct{}{}
	}
	l.waiting[id][ch] = struct{}{}
	l.n++
	if l.run == nil {
		rctx, cancel := context.WithCancel(context.Background())
		l.run = &listenRun{cancel: cancel, ready: make(chan struct{})}
		go l.listen(rctx, l.run)
	}
	ready := l.run.ready
	l.mu.Unlock()
	select {
	case <-ready:
	case <-ctx.Done():
	}
	return ch, func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		delete(l.waiting[id], ch)
		if len(l.waiting[id]) == 0 {
			delete(l.waiting, id)
		}
		l.n--
		if l.n == 0 && l.run != nil {
			l.run.cancel()
			l.run = nil
		}
	}
}

func (l *listener) state() (int, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.n, l.run != nil && l.run.connected
}

// listen holds one connection with LISTEN until ctx ends, and fans out
// what it hears. A broken connection is taken again after a pause; the
// waits' own rechecks cover the gap.
func (l *listener) listen(ctx context.Context, run *listenRun) {
	readyOnce := sync.OnceFunc(func() { close(run.ready) })
	defer readyOnce()
	for ctx.Err() == nil {
		err := l.listenOnce(ctx, run, readyOnce)
		if ctx.Err() != nil {
			return
		}
		l.logger.Warn("the operations' listener lost its connection; waits read their operations meanwhile", "err", err)
		readyOnce()
		select {
		case <-ctx.Done():
			return
		case <-time.After(waitRecheck):
		}
	}
}

func (l *listener) listenOnce(ctx context.Context, run *listenRun, ready func()) error {
	conn, err := l.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "LISTEN "+operationEnded); err != nil {
		_ = conn.Conn().Close(context.Background()) // the pool drops a closed connection
		return err
	}
	l.mu.Lock()
	run.connected = true
	l.mu.Unlock()
	ready()
	defer func() {
		l.mu.Lock()
		run.connected = false
		l.mu.Unlock()
		// Back to the pool listening to nothing.
		if _, err := conn.Exec(context.Background(), "UNLISTEN *"); err != nil {
			_ = conn.Conn().Close(context.Background())
		}
	}()
	for {
		n, err := conn.Conn().WaitForNotification(ctx)
		if err != nil {
			return err
		}
		l.mu.Lock()
		for ch := range l.waiting[n.Payload] {
			select {
			case ch <- struct{}{}:
			default:
			}
		}
		l.mu.Unlock()
	}
}
