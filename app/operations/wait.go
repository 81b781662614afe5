package operations

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// waitRecheck bounds how long a wait trusts the notification alone: it
// reads the operation again at least this often.
const waitRecheck = time.Second

// listenLinger is how long the listener keeps its connection after the
// last wait ended, so that a caller's next wait finds it listening.
const listenLinger = 2 * time.Second

// endedKept is how long the listener remembers an end, for a wait that
// subscribes just after its operation ended.
const endedKept = 10 * time.Second

// Wait waits until the operation ends or ctx does, and returns it as it is
// then. Every wait of this process shares one LISTEN connection for the
// ends; it reads the operation again at least every second besides.
func (e *Engine) Wait(ctx context.Context, id string) (*Operation, error) {
	return e.wait(ctx, id, Mark{})
}

// Mark is the listener's state at one moment, taken before an operation is
// admitted (Engine.Mark) and given to WaitSince.
type Mark struct {
	run    *listenRun
	breaks int
}

// Mark notes whether the listener listens now; WaitSince then knows
// whether it has heard every end since.
func (e *Engine) Mark() Mark {
	return e.ends.mark()
}

// WaitSince is Wait for op as it was read or admitted after m was taken:
// when op was running then and the listener has listened with no break
// since m, an end it did not hear has not happened, so the wait reads
// nothing before the end. An end in this process hands the wait the
// operation as it ended, with no read at all; one in another process is
// read once.
func (e *Engine) WaitSince(ctx context.Context, op *Operation, m Mark) (*Operation, error) {
	if op.State != Running {
		m = Mark{}
	}
	return e.wait(ctx, op.ID, m)
}

func (e *Engine) wait(ctx context.Context, id string, m Mark) (*Operation, error) {
	// The reads are not cut by ctx: ctx bounds the wait, and the answer is
	// the operation as it is when the wait ends.
	read := func() (*Operation, error) {
		op, err := e.ByID(context.WithoutCancel(ctx), e.st.Pool, id)
		if err != nil {
			return nil, fmt.Errorf("read operation %s: %w", id, err)
		}
		return op, nil
	}
	ended, heard, stop := e.ends.subscribe(ctx, id, m)
	defer stop()
	tick := time.NewTimer(e.recheck)
	defer tick.Stop()
	var given *Operation
	for {
		op := given
		if op == nil && (!heard || ctx.Err() != nil) {
			var err error
			if op, err = read(); err != nil {
				return nil, err
			}
		}
		if op != nil && (op.State != Running || ctx.Err() != nil) {
			return op, nil
		}
		heard = false // from now on, a wake reads unless it was handed the end
		given = nil
		tick.Reset(e.recheck)
		select {
		case <-ctx.Done():
		case given = <-ended:
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
// held while anyone waits (and listenLinger after) and given back to the
// pool when nobody does; it fans each end out to the callers waiting for
// that operation. Ends in this process are handed to its waits as they
// ended (Engine.finish), with no read.
type listener struct {
	pool   *pgxpool.Pool
	logger *slog.Logger

	mu      sync.Mutex
	waiting map[string]map[chan *Operation]struct{}
	n       int
	run     *listenRun
	linger  *time.Timer
	// ended are the ends heard or made lately, by operation: the operation
	// as it ended when this process ended it, nil when only its
	// notification was heard.
	ended map[string]endedOp
	// ending are the operations this process is ending now: their
	// notification, which can come before the end is handed on, is left to
	// the hand-off.
	ending map[string]int
	// followers receive the IDs of boxes that changed (Follow).
	followers map[chan string]struct{}
}

type endedOp struct {
	op *Operation
	at time.Time
}

// listenRun is one spell of holding the connection.
type listenRun struct {
	cancel    context.CancelFunc
	ready     chan struct{} // closed once LISTEN is in place, or failed
	connected bool
	breaks    int // connections lost in this spell
}

func newListener(pool *pgxpool.Pool, logger *slog.Logger) *listener {
	return &listener{pool: pool, logger: logger, waiting: map[string]map[chan *Operation]struct{}{}, ended: map[string]endedOp{},
		ending: map[string]int{}, followers: map[chan string]struct{}{}}
}

func (l *listener) mark() Mark {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.run == nil || !l.run.connected {
		return Mark{}
	}
	return Mark{run: l.run, breaks: l.run.breaks}
}

// subscribe registers a wait for id's end; the channel receives when the
// end is heard: the operation as it ended, or nil when it must be read. It
// returns once the listener listens (or could not), so an end after it is
// never missed but by the recheck. heard says the listener has listened
// since m without a break, so that an end before the subscription is
// already on the channel.
func (l *listener) subscribe(ctx context.Context, id string, m Mark) (<-chan *Operation, bool, func()) {
	ch := make(chan *Operation, 1)
	l.mu.Lock()
	if l.waiting[id] == nil {
		l.waiting[id] = map[chan *Operation]struct{}{}
	}
	l.waiting[id][ch] = struct{}{}
	l.holdLocked()
	heard := m.run != nil && m.run == l.run && l.run.connected && l.run.breaks == m.breaks
	if end, ok := l.ended[id]; ok {
		ch <- copyOp(end.op)
		heard = true
	}
	ready := l.run.ready
	l.mu.Unlock()
	select {
	case <-ready:
	case <-ctx.Done():
	}
	return ch, heard, func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		delete(l.waiting[id], ch)
		if len(l.waiting[id]) == 0 {
			delete(l.waiting, id)
		}
		l.letGoLocked()
	}
}

// holdLocked counts one more holder of the connection (a wait or a
// follower) and takes the connection when nobody held it.
func (l *listener) holdLocked() {
	l.n++
	if l.linger != nil {
		l.linger.Stop()
		l.linger = nil
	}
	if l.run == nil {
		rctx, cancel := context.WithCancel(context.Background())
		l.run = &listenRun{cancel: cancel, ready: make(chan struct{})}
		go l.listen(rctx, l.run)
	}
}

// letGoLocked counts one holder fewer; the last one's leaving gives the
// connection back listenLinger later, unless someone holds it again.
func (l *listener) letGoLocked() {
	l.n--
	if l.n == 0 && l.run != nil && l.linger == nil {
		run := l.run
		l.linger = time.AfterFunc(listenLinger, func() {
			l.mu.Lock()
			defer l.mu.Unlock()
			if l.n == 0 && l.run == run {
				run.cancel()
				l.run = nil
				l.linger = nil
			}
		})
	}
}

// FollowMax is how many followers (open pages' event streams) a process
// holds at once; one more is refused with ErrTooManyFollowers.
const FollowMax = 256

// followBuffer is how many changed boxes a follower may have unread; more
// are dropped for it, and it hears of the box's next change.
const followBuffer = 64

// ErrTooManyFollowers refuses a follower past FollowMax.
var ErrTooManyFollowers = errors.New("too many pages follow the boxes' changes in this process")

// Follow subscribes to the boxes' changes in every process: the channel
// receives a box's ID each time one of its operations is admitted or ends,
// or BoxChanged says something else changed it. Every follower of the
// process shares the one LISTEN connection the waits use. It returns once
// the listener listens (or could not; then changes are heard once it
// does). stop ends the subscription.
func (e *Engine) Follow(ctx context.Context) (<-chan string, func(), error) {
	l := e.ends
	ch := make(chan string, followBuffer)
	l.mu.Lock()
	if len(l.followers) >= FollowMax {
		l.mu.Unlock()
		return nil, nil, ErrTooManyFollowers
	}
	l.followers[ch] = struct{}{}
	l.holdLocked()
	ready := l.run.ready
	l.mu.Unlock()
	select {
	case <-ready:
	case <-ctx.Done():
	}
	return ch, sync.OnceFunc(func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		delete(l.followers, ch)
		l.letGoLocked()
	}), nil
}

// Followers is how many followers the process holds now; tests read it.
func (e *Engine) Followers() int {
	e.ends.mu.Lock()
	defer e.ends.mu.Unlock()
	return len(e.ends.followers)
}

// BoxChanged tells every process's followers, at q's commit, that box
// changed by something that is not an operation's admission or end (a
// request for the person's word, a box's automatic history switched).
func (e *Engine) BoxChanged(ctx context.Context, q DB, box string) error {
	if _, err := q.Exec(ctx, "SELECT pg_notify($1, $2)", boxChanged, box); err != nil {
		return fmt.Errorf("tell the pages that box %s changed: %w", box, err)
	}
	return nil
}

// changed hands a box's change to every follower; a follower whose buffer
// is full misses it.
func (l *listener) changed(box string) {
	if box == "" {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for ch := range l.followers {
		select {
		case ch <- box:
		default:
		}
	}
}

// endingNow says this process is ending op id; done hands its waits the
// operation as it ended, or nil when the end did not commit as far as it
// knows (they read it).
func (l *listener) endingNow(id string) (done func(*Operation)) {
	l.mu.Lock()
	l.ending[id]++
	l.mu.Unlock()
	return func(op *Operation) {
		l.mu.Lock()
		if l.ending[id]--; l.ending[id] <= 0 {
			delete(l.ending, id)
		}
		l.mu.Unlock()
		l.end(id, op, true)
	}
}

// end tells the waits for op that it ended: op as it ended (this process
// ended it), or nil (another did, and they read it). Ends are remembered
// endedKept, for a wait that subscribes after its operation ended. A
// notification (!here) of an end this process is making is left to its
// hand-off.
func (l *listener) end(id string, op *Operation, here bool) {
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if !here && l.ending[id] > 0 {
		return
	}
	if prev, ok := l.ended[id]; ok && op == nil && prev.op != nil {
		op = prev.op // the notification of an end this process handed already
	}
	l.ended[id] = endedOp{op: op, at: now}
	if len(l.ended) > 64 {
		for k, v := range l.ended {
			if now.Sub(v.at) > endedKept {
				delete(l.ended, k)
			}
		}
	}
	for ch := range l.waiting[id] {
		select {
		case ch <- copyOp(op):
		default:
		}
	}
}

// forget drops what the listener remembers of op's last end, as it runs
// again.
func (l *listener) forget(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.ended, id)
}

// copyOp is a wait's own copy of an ended operation, nil for nil.
func copyOp(op *Operation) *Operation {
	if op == nil {
		return nil
	}
	c := *op
	return &c
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
	for _, channel := range []string{operationEnded, boxChanged} {
		if _, err := conn.Exec(ctx, "LISTEN "+channel); err != nil {
			_ = conn.Conn().Close(context.Background()) // the pool drops a closed connection
			return err
		}
	}
	l.mu.Lock()
	run.connected = true
	l.mu.Unlock()
	ready()
	defer func() {
		l.mu.Lock()
		run.connected = false
		run.breaks++
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
		if n.Channel == boxChanged {
			l.changed(n.Payload)
			continue
		}
		l.end(n.Payload, nil, false)
	}
}
