package pvesim

import (
	"fmt"
	"log/slog"
	mrand "math/rand/v2"
	"strings"
	"sync"
	"time"
)

// cluster is the simulated cluster's state: its nodes, storages, guests and
// their snapshots, principals and tickets, tasks, injected faults and clock,
// all behind one mutex; and what moves it on: the clock, and the tasks that
// end when it reaches them.
type cluster struct {
	cfg Config
	log *slog.Logger

	mu       sync.Mutex
	clock    clockState
	rng      *mrand.Rand
	nodes    map[string]*node
	storages map[string]*storage // key: node + "/" + storage ID
	guests   map[int]*guest
	users    map[string]*principal // key: user@realm
	tokens   map[string]*principal // key: user@realm!tokenid
	pools    map[string]bool
	tickets  map[string]ticket
	csrf     map[string]string // ticket -> CSRF prevention token
	faults   []fault
	pending  []*task // tasks not yet done, so advancing needs no scan of all
	stalls   []fault // the next tasks that run until FinishTask (StallNextTask)
	calls    map[string]int
	nextPID  int
}

// newCluster makes an empty cluster whose random choices (MAC addresses,
// UUIDs) follow seed.
func newCluster(cfg Config, log *slog.Logger, seed uint64) *cluster {
	s := &cluster{
		cfg:      cfg,
		log:      log,
		clock:    newClockState(cfg.StartTime),
		rng:      mrand.New(mrand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		nodes:    map[string]*node{},
		storages: map[string]*storage{},
		guests:   map[int]*guest{},
		users:    map[string]*principal{},
		tokens:   map[string]*principal{},
		pools:    map[string]bool{},
		tickets:  map[string]ticket{},
		csrf:     map[string]string{},
		calls:    map[string]int{},
		nextPID:  0x1a2b0,
	}
	// root@pam exists on every Proxmox VE and has every privilege; its
	// password is unknown, so it cannot sign in here: it only owns the
	// tasks an admin runs outside (control API).
	s.users[rootUser] = &principal{id: rootUser, root: true}
	return s
}

// Now returns the simulator's current time.
func (s *cluster) Now() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.clock.now()
}

// Advance moves the simulator's clock forward by d and finishes every task
// that is due by then, in order, as if that time had passed.
func (s *cluster) Advance(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if d < 0 {
		d = 0
	}
	if s.clock.frozen {
		s.clock.at = s.clock.at.Add(d)
	} else {
		s.clock.offset += d
	}
	s.advanceLocked()
}

// SetTime sets the simulator's clock to t (and freezes it there), then
// finishes every task due by t. A time before the current one is refused,
// so task times never run backwards.
func (s *cluster) SetTime(t time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t.Before(s.clock.now()) {
		return errorf("pvesim: the simulator's clock does not run backwards (now %s)", s.clock.now().UTC().Format(time.RFC3339))
	}
	s.clock = clockState{frozen: true, at: t}
	s.advanceLocked()
	return nil
}

// realistic moves a task's due time to what was measured on Proxmox VE, when
// Config.Realistic is on and no per-type duration overrides it.
func (s *cluster) realistic(t *task, d time.Duration) {
	if !s.cfg.Realistic || t.done || t.stalled {
		return
	}
	if _, ok := s.cfg.TaskDurations[t.typ]; ok {
		return
	}
	t.due = t.start.Add(d)
}

// Calls returns how many API requests were served, per method and route
// pattern (e.g. "GET /nodes/{node}/{type}/{vmid}/snapshot"), so a benchmark
// can count the calls a sweep makes. Unknown paths count under "METHOD ?".
func (s *cluster) Calls() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int, len(s.calls))
	for k, v := range s.calls {
		out[k] = v
	}
	return out
}

// ResetCalls sets every counter of Calls back to zero.
func (s *cluster) ResetCalls() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = map[string]int{}
}

// taskDuration is how long a task of type typ runs.
func (s *cluster) taskDuration(typ string) time.Duration {
	if d, ok := s.cfg.TaskDurations[typ]; ok {
		return max(d, 0)
	}
	switch {
	case s.cfg.TaskDuration < 0:
		return 0
	case s.cfg.TaskDuration == 0:
		return DefaultTaskDuration
	}
	return s.cfg.TaskDuration
}

// newTask starts a task on node n for caller and returns it. finish runs
// when the task is due; nil means the task only waits.
func (s *cluster) newTask(n *node, typ, id string, caller *principal, finish func(t *task, failMsg string) error) *task {
	now := s.clock.now()
	s.nextPID++
	n.taskSeq++
	user, tokenid := caller.id, ""
	if u, tok, ok := strings.Cut(caller.id, "!"); ok {
		user, tokenid = u, tok
	}
	t := &task{
		node:    n.name,
		pid:     s.nextPID,
		pstart:  n.pstart + int(now.Sub(n.bootAt)/(10*time.Millisecond)),
		start:   now,
		typ:     typ,
		id:      id,
		user:    user,
		tokenid: tokenid,
		due:     now.Add(s.taskDuration(typ)),
		seq:     n.taskSeq,
		finish:  finish,
	}
	if s.takeStall(typ, id) {
		t.stalled, t.due = true, stalledDue
	}
	t.upid = upidFor(n.name, t.pid, t.pstart, now, typ, id, caller.id)
	t.fault = s.takeFault(typ, id)
	n.tasks = append(n.tasks, t)
	s.pending = append(s.pending, t)
	return t
}

// failTask ends a task at once with msg, as a worker that dies on a check
// does (the UPID was already answered).
func (s *cluster) failTask(t *task, msg string) {
	s.endTask(t, s.clock.now(), strings.TrimRight(msg, "\n"))
}

func (s *cluster) endTask(t *task, at time.Time, status string) {
	t.done = true
	t.end = at
	if first, _, cut := strings.Cut(status, "\n"); cut {
		status = first
	}
	t.status = status
	switch {
	case status == "OK":
		t.log = append(t.log, "TASK OK")
	case strings.HasPrefix(status, "WARNINGS: "):
		t.log = append(t.log, "TASK "+status)
	case status != statusUnexpected:
		t.log = append(t.log, "TASK ERROR: "+status)
	}
}

// advanceLocked finishes every task due by now, oldest due first.
func (s *cluster) advanceLocked() {
	for {
		now := s.clock.now()
		var next *task
		live := s.pending[:0]
		for _, t := range s.pending {
			if t.done {
				continue
			}
			live = append(live, t)
			if t.due.After(now) {
				continue
			}
			if next == nil || t.due.Before(next.due) || (t.due.Equal(next.due) && t.pid < next.pid) {
				next = t
			}
		}
		clear(s.pending[len(live):])
		s.pending = live
		if next == nil {
			return
		}
		s.runFinish(next)
	}
}

func (s *cluster) runFinish(t *task) {
	if t.fault != nil && t.fault.kind == faultDie {
		// The worker is killed half-way: nothing after its first part runs,
		// so locks and snapstate stay as they were.
		t.log = append(t.log, "(pvesim simulator: worker killed half-way by the control API)")
		s.endTask(t, t.due, statusUnexpected)
		s.log.Info("pvesim simulator: task died half-way", "upid", t.upid)
		return
	}
	failMsg := ""
	if t.fault != nil && t.fault.kind == faultFail {
		failMsg = t.fault.message
	}
	var err error
	if t.finish != nil {
		err = t.finish(t, failMsg)
	}
	if err != nil {
		s.endTask(t, t.due, err.Error())
		return
	}
	s.endTask(t, t.due, "OK")
}

// killRunningTasks ends a node's running tasks as a reboot does: their
// workers are gone without a final line.
func (s *cluster) killRunningTasks(n *node) {
	now := s.clock.now()
	for _, t := range n.tasks {
		if !t.done {
			s.endTask(t, now, statusUnexpected)
		}
	}
}

func (s *cluster) findTask(upid string) *task {
	node, ok := parseUPID(upid)
	if !ok {
		return nil
	}
	n := s.nodes[node]
	if n == nil {
		return nil
	}
	for _, t := range n.tasks {
		if t.upid == upid {
			return t
		}
	}
	return nil
}

// Tasks returns every task of a node, newest first, after finishing the due
// ones.
func (s *cluster) Tasks(nodeName string) ([]TaskInfo, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.advanceLocked()
	n := s.nodes[nodeName]
	if n == nil {
		return nil, fmt.Errorf("pvesim: node %q: %w", nodeName, ErrNotFound)
	}
	out := make([]TaskInfo, 0, len(n.tasks))
	for _, t := range sortedTasks(n.tasks) {
		out = append(out, TaskInfo{UPID: t.upid, Node: t.node, Type: t.typ, ID: t.id, User: t.owner(),
			Running: !t.done, ExitStatus: t.status, Start: t.start, End: t.end})
	}
	return out, nil
}

func (s *cluster) takeFault(typ, id string) *fault {
	for i, f := range s.faults {
		if f.typ == typ && (f.id == "" || f.id == id) {
			s.faults = append(s.faults[:i], s.faults[i+1:]...)
			return &f
		}
	}
	return nil
}

func (s *cluster) takeStall(typ, id string) bool {
	for i, f := range s.stalls {
		if f.typ == typ && (f.id == "" || f.id == id) {
			s.stalls = append(s.stalls[:i], s.stalls[i+1:]...)
			return true
		}
	}
	return false
}
