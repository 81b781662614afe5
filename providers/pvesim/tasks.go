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
	// finish runs at due under cluster.mu. failMsg is set when an injected fault
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

type faultKind int

const (
	faultFail faultKind = iota + 1
	faultDie
)

// fault is an injected failure, taken by the next task of its type (and
// guest, when id is set).
type fault struct {
	kind    faultKind
	typ     string
	id      string
	message string
}

// stalledDue is a stalled task's due time: never, until FinishTask.
var stalledDue = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)
