package pvesim

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// statusUnexpected is what Proxmox reports for a worker that died without
// writing its final line (CO Tools.pm upid_read_status).
const statusUnexpected = "unexpected status"

// task is one Proxmox worker task. Its work runs in two parts: what the
// worker does at once (checks, locks, snapstate=prepare) runs when the task
// is made; the rest (finish) runs when the simulator's clock reaches due.
type task struct {
	upid    string
	node    string
	pid     int
	pstart  int
	start   time.Time
	typ     string
	id      string
	user    string // user@realm
	tokenid string // the token's name, or ""
	due     time.Time
	done    bool
	end     time.Time
	status  string
	log     []string
	seq     int
	fault   *fault
	// stalled: the task runs until FinishTask ends it (StallNextTask); its
	// due time means nothing until then.
	stalled bool
	// finish runs at due under Sim.mu. failMsg is set when an injected fault
	// makes the task's main step fail: finish then does Proxmox's cleanup
	// for that failure and returns the error.
	finish func(t *task, failMsg string) error
}

// upidFor writes a UPID as Proxmox does (CO Tools.pm upid_encode):
// UPID:<node>:<pid %08X>:<pstart %08X>:<starttime %08X>:<type>:<id>:<user>:
func upidFor(node string, pid, pstart int, start time.Time, typ, id, user string) string {
	return fmt.Sprintf("UPID:%s:%08X:%08X:%08X:%s:%s:%s:", node, pid, pstart, start.Unix(), typ, id, user)
}

// parseUPID splits a UPID (CO Tools.pm upid_decode). It reports false for
// anything that is not one.
func parseUPID(upid string) (node string, ok bool) {
	parts := strings.Split(upid, ":")
	if len(parts) != 9 || parts[0] != "UPID" || parts[8] != "" {
		return "", false
	}
	for _, hex := range parts[2:5] {
		if _, err := strconv.ParseUint(hex, 16, 64); err != nil {
			return "", false
		}
	}
	return parts[1], true
}

// newTask starts a task on node n for caller and returns it. finish runs
// when the task is due; nil means the task only waits.
func (s *Sim) newTask(n *node, typ, id string, caller *principal, finish func(t *task, failMsg string) error) *task {
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
func (s *Sim) failTask(t *task, msg string) {
	s.endTask(t, s.clock.now(), strings.TrimRight(msg, "\n"))
}

func (s *Sim) endTask(t *task, at time.Time, status string) {
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
func (s *Sim) advanceLocked() {
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

func (s *Sim) runFinish(t *task) {
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
func (s *Sim) killRunningTasks(n *node) {
	now := s.clock.now()
	for _, t := range n.tasks {
		if !t.done {
			s.endTask(t, now, statusUnexpected)
		}
	}
}

func (s *Sim) findTask(upid string) *task {
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

// taskOwner is the task's user as permission checks compare it: the token's
// full ID for a token's task.
func (t *task) owner() string {
	if t.tokenid != "" {
		return t.user + "!" + t.tokenid
	}
	return t.user
}

// listJSON is one item of GET /nodes/{node}/tasks (PM API2/Tasks.pm
// node_tasks: upid, node, pid, pstart, starttime, type, id, user, tokenid,
// endtime, status).
func (t *task) listJSON() map[string]any {
	m := map[string]any{
		"upid":      t.upid,
		"node":      t.node,
		"pid":       t.pid,
		"pstart":    t.pstart,
		"starttime": t.start.Unix(),
		"type":      t.typ,
		"id":        t.id,
		"user":      t.user,
	}
	if t.tokenid != "" {
		m["tokenid"] = t.tokenid
	}
	if t.done {
		m["endtime"] = t.end.Unix()
		m["status"] = t.status
	} else {
		m["status"] = "RUNNING"
	}
	return m
}

// statusJSON is GET /nodes/{node}/tasks/{upid}/status (PM API2/Tasks.pm
// read_task_status: status running|stopped, exitstatus when stopped).
func (t *task) statusJSON() map[string]any {
	m := map[string]any{
		"upid":      t.upid,
		"node":      t.node,
		"pid":       t.pid,
		"pstart":    t.pstart,
		"starttime": t.start.Unix(),
		"type":      t.typ,
		"id":        t.id,
		"user":      t.user,
		"status":    "running",
	}
	if t.tokenid != "" {
		m["tokenid"] = t.tokenid
	}
	if t.done {
		m["status"] = "stopped"
		m["exitstatus"] = t.status
	}
	return m
}

// TaskInfo describes a task for the simulator's Go API.
type TaskInfo struct {
	UPID       string
	Node       string
	Type       string
	ID         string
	User       string
	Running    bool
	ExitStatus string
	Start, End time.Time
}

// Tasks returns every task of a node, newest first, after finishing the due
// ones.
func (s *Sim) Tasks(nodeName string) ([]TaskInfo, error) {
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

// sortedTasks orders tasks newest first (PM API2/Tasks.pm sorts the index by
// start time, descending).
func sortedTasks(ts []*task) []*task {
	out := append([]*task(nil), ts...)
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].start.Equal(out[j].start) {
			return out[i].start.After(out[j].start)
		}
		return out[i].seq > out[j].seq
	})
	return out
}
