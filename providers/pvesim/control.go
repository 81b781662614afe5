package pvesim

import (
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"time"
)

// FailNextTask makes the next task of taskType ("vzsnapshot", "qmrollback",
// ...) on guest vmid (0: any guest) fail at its main step with message, and
// Proxmox's cleanup for that failure run (a snapshot's section and lock are
// removed; a rollback keeps lock=rollback; a non-forced delete keeps
// lock=snapshot-delete and snapstate=delete).
func (s *Sim) FailNextTask(taskType string, vmid int, message string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if message == "" {
		message = "pvesim simulator: injected failure"
	}
	s.faults = append(s.faults, fault{kind: faultFail, typ: taskType, id: idOrEmpty(vmid), message: message})
	s.log.Info("pvesim simulator: next task will fail", "type", taskType, "vmid", vmid)
}

// DieNextTask makes the next task of taskType on guest vmid (0: any) die
// half-way: it ends with "unexpected status", and what its first part did
// stays (a snapshot left with snapstate=prepare and lock=snapshot, a delete
// with snapstate=delete and lock=snapshot-delete, a rollback with
// lock=rollback).
func (s *Sim) DieNextTask(taskType string, vmid int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, fault{kind: faultDie, typ: taskType, id: idOrEmpty(vmid)})
	s.log.Info("pvesim simulator: next task will die half-way", "type", taskType, "vmid", vmid)
}

// StallNextTask makes the next task of taskType ("vzclone",
// "vzdelsnapshot", ...) on guest vmid (0: any guest) run until FinishTask
// ends it, whatever its duration: a test reads what a client does while the
// task runs (a job snoozed on it, a worker killed during it) without racing
// the task's end. It combines with FailNextTask and DieNextTask: the
// stalled task fails or dies when it is finished.
func (s *Sim) StallNextTask(taskType string, vmid int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stalls = append(s.stalls, fault{typ: taskType, id: idOrEmpty(vmid)})
}

// FinishTask ends a task StallNextTask stalled: the rest of its work runs now,
// as when a task's time comes, and it ends at the simulator's now. A task
// not stalled, or ended already, is an error.
func (s *Sim) FinishTask(upid string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.findTask(upid)
	switch {
	case t == nil:
		return errorf("pvesim: no task %s", upid)
	case !t.stalled || t.done:
		return errorf("pvesim: task %s is not stalled", upid)
	}
	t.stalled, t.due = false, s.clock.now()
	s.advanceLocked()
	return nil
}

func idOrEmpty(vmid int) string {
	if vmid == 0 {
		return ""
	}
	return itoa(vmid)
}

// CutNode makes a node unreachable from the API node: every call on
// /nodes/<node>/... answers HTTP 595 "No route to host", as pveproxy does
// for a request it cannot proxy; /nodes lists it "offline" and
// /cluster/resources shows its guests with status "unknown". Calls not
// under /nodes/<node> still work. Its guests and tasks go on.
func (s *Sim) CutNode(name string) error {
	return s.withNode(name, func(n *node) { n.cut = true })
}

// DropNode cuts a node off at the connection level instead: every call on
// /nodes/<node>/... has its connection closed without an answer, as when a
// client talks to that node itself and it goes away. /nodes and
// /cluster/resources show it as CutNode does.
func (s *Sim) DropNode(name string) error {
	return s.withNode(name, func(n *node) { n.cut, n.dropped = true, true })
}

// ReconnectNode undoes CutNode and DropNode.
func (s *Sim) ReconnectNode(name string) error {
	return s.withNode(name, func(n *node) { n.cut, n.dropped = false, false })
}

func (s *Sim) withNode(name string, f func(n *node)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.advanceLocked()
	n := s.nodes[name]
	if n == nil {
		return fmt.Errorf("pvesim: node %q: %w", name, ErrNotFound)
	}
	f(n)
	return nil
}

// RebootNode reboots a node: its running tasks die ("unexpected status"),
// every guest stops, then guests with onboot=1 start again, unless they are
// templates (a template never starts) or locked (the start fails on the
// lock), each with a start task by root@pam under a startall task.
func (s *Sim) RebootNode(name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.advanceLocked()
	n := s.nodes[name]
	if n == nil {
		return fmt.Errorf("pvesim: node %q: %w", name, ErrNotFound)
	}
	s.killRunningTasks(n)
	now := s.clock.now()
	n.bootAt = now
	n.pstart += 100000
	root := s.users[rootUser]
	for _, g := range s.sortedGuests() {
		if g.node != name {
			continue
		}
		g.running, g.paused = false, false
	}
	all := s.newTask(n, "startall", "", root, nil)
	for _, g := range s.sortedGuests() {
		if g.node != name || g.conf["onboot"] != "1" || g.isTemplate() {
			continue
		}
		tt := "qmstart"
		if g.typ == LXC {
			tt = "vzstart"
		}
		t := s.newTask(n, tt, itoa(g.vmid), root, nil)
		if l := g.conf["lock"]; l != "" {
			s.failTask(t, g.kind()+" is locked ("+l+")")
			continue
		}
		s.applyPower(g, "start")
		s.endTask(t, now, "OK")
	}
	s.endTask(all, now, "OK")
	s.log.Info("pvesim simulator: node rebooted", "node", name)
	return nil
}

// OutsideSnapshot takes a snapshot as an admin would on the host
// (pct/qm snapshot): a task by root@pam in the node's list. It returns the
// UPID.
func (s *Sim) OutsideSnapshot(vmid int, name, description string) (string, error) {
	return s.outside(vmid, func(g *guest, root *principal) (*task, error) {
		if msg := reservedSnapshotName(g.typ, name); msg != "" {
			return nil, fmt.Errorf("pvesim: %s", msg)
		}
		if msg := checkType(pConfigID, name); msg != "" {
			return nil, fmt.Errorf("pvesim: snapname: %s", msg)
		}
		return s.startSnapshot(g, root, name, description, false), nil
	})
}

// OutsideRollback rolls a guest back as an admin would (pct/qm rollback),
// by root@pam.
func (s *Sim) OutsideRollback(vmid int, name string) (string, error) {
	return s.outside(vmid, func(g *guest, root *principal) (*task, error) {
		return s.startRollback(g, root, name, false), nil
	})
}

// OutsideDelete deletes a snapshot as an admin would (pct/qm delsnapshot),
// by root@pam.
func (s *Sim) OutsideDelete(vmid int, name string, force bool) (string, error) {
	return s.outside(vmid, func(g *guest, root *principal) (*task, error) {
		return s.startDeleteSnapshot(g, root, name, force), nil
	})
}

func (s *Sim) outside(vmid int, f func(g *guest, root *principal) (*task, error)) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.advanceLocked()
	g := s.guests[vmid]
	if g == nil {
		return "", fmt.Errorf("pvesim: guest %d: %w", vmid, ErrNotFound)
	}
	t, err := f(g, s.users[rootUser])
	if err != nil {
		return "", err
	}
	s.log.Info("pvesim simulator: outside change as root@pam", "type", t.typ, "vmid", vmid)
	return t.upid, nil
}

// SetLock leaves a guest locked (lock: rollback, backup, ...), as a task
// that died would.
func (s *Sim) SetLock(vmid int, lock string) error {
	return s.withGuest(vmid, func(g *guest) {
		if lock == "" {
			delete(g.conf, "lock")
		} else {
			g.conf["lock"] = lock
		}
	})
}

// Unlock removes a guest's lock, as root's `pct unlock <vmid>` or
// `qm unlock <vmid>` does on the host.
func (s *Sim) Unlock(vmid int) error { return s.SetLock(vmid, "") }

// Write makes guest vmid write n bytes on its root disk: its use grows (up
// to the disk's size) and, on thin storage, the bytes the newest snapshot
// then holds alone grow too.
func (s *Sim) Write(vmid int, n int64) error {
	return s.withGuest(vmid, func(g *guest) {
		vol, _ := g.rootVolume()
		g.written = min(g.written+n, vol.size)
		if p := g.snaps[g.conf["parent"]]; p != nil {
			p.unique = min(p.unique+n, vol.size)
		}
	})
}

func (s *Sim) withGuest(vmid int, f func(g *guest)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.advanceLocked()
	g := s.guests[vmid]
	if g == nil {
		return fmt.Errorf("pvesim: guest %d: %w", vmid, ErrNotFound)
	}
	f(g)
	return nil
}

// FillStorage fills a storage to percent (0 to 100) of its size with data
// that is not the simulated guests'; their own use counts towards it.
func (s *Sim) FillStorage(nodeName, storageID string, percent float64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.advanceLocked()
	st := s.storages[nodeName+"/"+storageID]
	if st == nil {
		return fmt.Errorf("pvesim: storage %q on %q: %w", storageID, nodeName, ErrNotFound)
	}
	if percent < 0 || percent > 100 {
		return fmt.Errorf("pvesim: fill storage: percent %v outside 0..100", percent)
	}
	st.fill = 0
	want := int64(float64(st.total) * percent / 100)
	st.fill = max(want-s.storageUsed(st), 0)
	return nil
}

// SnapshotInfo is one snapshot as the simulator holds it.
type SnapshotInfo struct {
	Name, Parent, SnapState, Description string
	VMState                              bool
	SnapTime                             int64
}

// GuestInfo is a guest as the simulator holds it, for tests.
type GuestInfo struct {
	VMID      int
	Type      GuestType
	Node      string
	Pool      string
	Running   bool
	Template  bool
	Lock      string
	Parent    string
	OnBoot    bool
	Config    map[string]string
	Snapshots []SnapshotInfo
	Written   int64
}

// Guest returns a guest's state (after finishing the due tasks).
func (s *Sim) Guest(vmid int) (GuestInfo, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.advanceLocked()
	g := s.guests[vmid]
	if g == nil {
		return GuestInfo{}, fmt.Errorf("pvesim: guest %d: %w", vmid, ErrNotFound)
	}
	gi := GuestInfo{VMID: g.vmid, Type: g.typ, Node: g.node, Pool: g.pool, Running: g.running, Template: g.isTemplate(),
		Lock: g.conf["lock"], Parent: g.conf["parent"], OnBoot: g.conf["onboot"] == "1", Config: copyConf(g.conf), Written: g.written}
	for _, sn := range g.snaps {
		gi.Snapshots = append(gi.Snapshots, SnapshotInfo{Name: sn.name, Parent: sn.parent, SnapState: sn.snapstate,
			Description: sn.description, VMState: sn.vmstate, SnapTime: sn.snaptime})
	}
	sort.Slice(gi.Snapshots, func(i, j int) bool { return g.snaps[gi.Snapshots[i].Name].seq < g.snaps[gi.Snapshots[j].Name].seq })
	return gi, nil
}

// serveControl is the control API: POST /pvesim/control/<action> with a
// JSON body, and "Authorization: Bearer <ControlSecret>". It is off unless
// Config.Control, and it needs its own secret even on the loopback: the
// boxes an agent works in may share the host, and a fault injected by one
// of them would be indistinguishable from a real Proxmox failure.
func (s *Sim) serveControl(w http.ResponseWriter, r *http.Request) {
	got := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	if s.controlSecret == "" || subtle.ConstantTimeCompare([]byte(got), []byte(s.controlSecret)) != 1 {
		writeJSONPlain(w, http.StatusUnauthorized, map[string]any{"simulator": "pvesim", "error": "control API: bad or missing secret"})
		return
	}
	if r.Method != http.MethodPost {
		writeJSONPlain(w, http.StatusMethodNotAllowed, map[string]any{"simulator": "pvesim", "error": "control API: use POST"})
		return
	}
	var req controlRequest
	raw, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
	if err == nil && len(raw) > 0 {
		err = json.Unmarshal(raw, &req)
	}
	if err != nil {
		writeJSONPlain(w, http.StatusBadRequest, map[string]any{"simulator": "pvesim", "error": "control API: body: " + err.Error()})
		return
	}
	action := strings.TrimPrefix(r.URL.Path, controlPrefix)
	data, err := s.control(action, req)
	if err != nil {
		writeJSONPlain(w, http.StatusBadRequest, map[string]any{"simulator": "pvesim", "error": err.Error()})
		return
	}
	s.log.Info("pvesim simulator: control API", "action", action)
	writeJSONPlain(w, http.StatusOK, map[string]any{"simulator": "pvesim", "data": data})
}

// controlRequest is the body of every control action; each uses its own
// fields.
type controlRequest struct {
	Type        string  `json:"type"`
	VMID        int     `json:"vmid"`
	Message     string  `json:"message"`
	Node        string  `json:"node"`
	Storage     string  `json:"storage"`
	Percent     float64 `json:"percent"`
	Name        string  `json:"name"`
	Description string  `json:"description"`
	Force       bool    `json:"force"`
	Lock        string  `json:"lock"`
	Bytes       int64   `json:"bytes"`
	Advance     string  `json:"advance"`
	Set         string  `json:"set"`
}

// control runs one control action; the table of them is the control API.
func (s *Sim) control(action string, q controlRequest) (any, error) {
	switch action {
	case "fail-next":
		s.FailNextTask(q.Type, q.VMID, q.Message)
	case "die-next":
		s.DieNextTask(q.Type, q.VMID)
	case "cut-node":
		return nil, s.CutNode(q.Node)
	case "drop-node":
		return nil, s.DropNode(q.Node)
	case "reconnect-node":
		return nil, s.ReconnectNode(q.Node)
	case "reboot-node":
		return nil, s.RebootNode(q.Node)
	case "outside-snapshot":
		return s.OutsideSnapshot(q.VMID, q.Name, q.Description)
	case "outside-rollback":
		return s.OutsideRollback(q.VMID, q.Name)
	case "outside-delete":
		return s.OutsideDelete(q.VMID, q.Name, q.Force)
	case "lock":
		return nil, s.SetLock(q.VMID, q.Lock)
	case "unlock":
		return nil, s.Unlock(q.VMID)
	case "write":
		return nil, s.Write(q.VMID, q.Bytes)
	case "fill-storage":
		return nil, s.FillStorage(q.Node, q.Storage, q.Percent)
	case "state":
		return s.stateSummary(), nil
	case "clock":
		if q.Advance != "" {
			d, err := time.ParseDuration(q.Advance)
			if err != nil {
				return nil, fmt.Errorf("pvesim: clock advance: %w", err)
			}
			s.Advance(d)
		}
		if q.Set != "" {
			t, err := time.Parse(time.RFC3339, q.Set)
			if err != nil {
				return nil, fmt.Errorf("pvesim: clock set: %w", err)
			}
			if err := s.SetTime(t); err != nil {
				return nil, err
			}
		}
		return s.Now().UTC().Format(time.RFC3339Nano), nil
	default:
		return nil, fmt.Errorf("pvesim: unknown control action %q", action)
	}
	return nil, nil
}

func writeJSONPlain(w http.ResponseWriter, status int, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// stateSummary is the control API's "state": every guest as the simulator
// holds it, for a person watching the demo.
func (s *Sim) stateSummary() []GuestInfo {
	s.mu.Lock()
	ids := make([]int, 0, len(s.guests))
	for id := range s.guests {
		ids = append(ids, id)
	}
	s.mu.Unlock()
	sort.Ints(ids)
	out := make([]GuestInfo, 0, len(ids))
	for _, id := range ids {
		if g, err := s.Guest(id); err == nil {
			out = append(out, g)
		}
	}
	return out
}
