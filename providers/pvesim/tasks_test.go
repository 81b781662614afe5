package pvesim

import (
	"net/http"
	"net/url"
	"regexp"
	"testing"
	"time"
)

// TestTaskListArchiveVersusActive: the default source=archive hides running
// tasks; active shows only them; all shows both; newest first, with total
// (PM API2/Tasks.pm node_tasks).
func TestTaskListArchiveVersusActive(t *testing.T) {
	t.Parallel()
	e := setup(t, frozen())
	first := e.upid(t, "POST", "/nodes/pve-1/lxc/101/snapshot", form("snapname", "s1"))
	e.sim.Advance(time.Minute)
	running := e.upid(t, "POST", "/nodes/pve-1/qemu/102/snapshot", form("snapname", "s1"))

	list := func(params url.Values) ([]map[string]any, float64) {
		a := e.call(t, adminToken, "GET", "/nodes/pve-1/tasks", params)
		equal(t, "tasks status", a.status, http.StatusOK)
		total, _ := a.body["total"].(float64)
		return a.dataList(t), total
	}
	items, total := list(nil)
	equal(t, "archive: the finished one only", len(items), 1)
	equal(t, "archive total", total, float64(1))
	equal(t, "archive item", items[0]["upid"], any(first))
	equal(t, "archive status", items[0]["status"], any("OK"))
	equal(t, "token id apart", items[0]["tokenid"], any("admin"))
	equal(t, "user", items[0]["user"], any("boxsnap@pve"))
	if items[0]["endtime"] == nil {
		t.Fatal("a finished task has no endtime")
	}
	items, _ = list(form("source", "active"))
	equal(t, "active", len(items), 1)
	equal(t, "active item", items[0]["upid"], any(running))
	equal(t, "active status", items[0]["status"], any("RUNNING"))
	items, total = list(form("source", "all"))
	equal(t, "all", len(items), 2)
	equal(t, "all total", total, float64(2))
	equal(t, "newest first", items[0]["upid"], any(running))

	e.sim.Advance(time.Minute)
	items, _ = list(nil)
	equal(t, "archive after it ends", len(items), 2)

	// Filters and paging.
	items, _ = list(form("vmid", "102"))
	equal(t, "vmid filter", len(items), 1)
	items, _ = list(form("typefilter", "vzsnapshot"))
	equal(t, "typefilter", len(items), 1)
	items, _ = list(form("since", itoa(int(testStart().Add(30*time.Second).Unix()))))
	equal(t, "since", len(items), 1)
	items, total = list(form("limit", "1", "start", "1"))
	equal(t, "page", len(items), 1)
	equal(t, "page total", total, float64(2))
	equal(t, "second page item", items[0]["upid"], any(first))
	a := e.call(t, adminToken, "GET", "/nodes/pve-1/tasks", form("source", "bogus"))
	equal(t, "bad source", a.status, http.StatusBadRequest)
}

// TestTaskVisibility: a token without Sys.Audit on the node sees only its own
// tasks; root@pam's outside rollback is seen by a token with Sys.Audit (what
// boxsnap's outside-restore scan reads).
func TestTaskVisibility(t *testing.T) {
	t.Parallel()
	e := setup(t, frozen())
	equal(t, "take", e.finish(t, e.upid(t, "POST", "/nodes/pve-1/lxc/101/snapshot", form("snapname", "s1"))), "OK")
	upid, err := e.sim.OutsideRollback(101, "s1")
	must(t, err)
	if !regexp.MustCompile(`^UPID:pve-1:[0-9A-F]{8}:[0-9A-F]{8}:[0-9A-F]{8}:vzrollback:101:root@pam:$`).MatchString(upid) {
		t.Fatalf("outside rollback UPID %q", upid)
	}
	e.sim.Advance(time.Minute)
	items := e.call(t, adminToken, "GET", "/nodes/pve-1/tasks", form("typefilter", "vzrollback")).dataList(t)
	equal(t, "auditor sees root's rollback", len(items), 1)
	equal(t, "its user", items[0]["user"], any("root@pam"))
	equal(t, "its status", items[0]["status"], any("OK"))

	must(t, e.sim.AddToken("boxsnap@pve!snaponly", "s3cret", Grant{Path: "/vms", Privs: []string{"VM.Audit", "VM.Snapshot"}, Propagate: true}))
	own := e.call(t, "", "GET", "/nodes/pve-1/tasks", nil)
	equal(t, "no token", own.status, http.StatusUnauthorized)
	req, _ := http.NewRequest("GET", e.base+apiPrefix+"/nodes/pve-1/tasks", nil)
	req.Header.Set("Authorization", "PVEAPIToken=boxsnap@pve!snaponly=s3cret")
	resp, err := e.hc.Do(req)
	must(t, err)
	resp.Body.Close()
	equal(t, "snaponly lists", resp.StatusCode, http.StatusOK)

	// Its own task is readable, root's status is not.
	req, _ = http.NewRequest("GET", e.base+apiPrefix+"/nodes/pve-1/tasks/"+url.PathEscape(upid)+"/status", nil)
	req.Header.Set("Authorization", "PVEAPIToken=boxsnap@pve!snaponly=s3cret")
	resp, err = e.hc.Do(req)
	must(t, err)
	resp.Body.Close()
	equal(t, "another's task status", resp.Status, "403 Permission check failed (/nodes/pve-1, Sys.Audit)")

	a := e.call(t, adminToken, "GET", "/nodes/pve-1/tasks/UPID:pve-1:00000001:00000001:00000001:vzstart:101:root@pam:/status", nil)
	errs, _ := a.body["errors"].(map[string]any)
	equal(t, "unknown UPID", errs["upid"], any("no such task\n"))
	log := e.call(t, adminToken, "GET", "/nodes/pve-1/tasks/"+url.PathEscape(upid)+"/log", nil).dataList(t)
	equal(t, "log ends", log[len(log)-1]["t"], any("TASK OK"))
	equal(t, "log numbered from 1", log[0]["n"], any(float64(1)))
}

// TestTasksTakeConfiguredTime: per-type durations run on the simulator's
// clock.
func TestTasksTakeConfiguredTime(t *testing.T) {
	t.Parallel()
	e := setup(t, Config{StartTime: testStart(), TaskDuration: time.Second, TaskDurations: map[string]time.Duration{"vzsnapshot": 10 * time.Second}})
	upid := e.upid(t, "POST", "/nodes/pve-1/lxc/101/snapshot", form("snapname", "s1"))
	e.sim.Advance(9 * time.Second)
	equal(t, "at 9 s", e.taskStatus(t, upid)["status"], any("running"))
	e.sim.Advance(time.Second)
	equal(t, "at 10 s", e.taskStatus(t, upid)["status"], any("stopped"))
	stop := e.upid(t, "POST", "/nodes/pve-1/lxc/101/status/stop", nil)
	e.sim.Advance(time.Second)
	equal(t, "vzstop at 1 s", e.taskStatus(t, stop)["exitstatus"], any("OK"))
	a := e.call(t, adminToken, "POST", "/nodes/pve-1/lxc/101/status/stop", nil)
	equal(t, "LXC stop of a stopped CT", a.reason, "CT 101 not running")
	a = e.call(t, adminToken, "POST", "/nodes/pve-1/lxc/103/status/start", nil)
	equal(t, "LXC start", a.status, http.StatusOK)
	a = e.call(t, adminToken, "POST", "/nodes/pve-1/lxc/103/status/start", nil)
	equal(t, "LXC start while the first runs is allowed (not running yet)", a.status, http.StatusOK)
	e.sim.Advance(time.Second)
	a = e.call(t, adminToken, "POST", "/nodes/pve-1/lxc/103/status/start", nil)
	equal(t, "LXC start of a running CT", a.reason, "CT 103 already running")
	qs := e.upid(t, "POST", "/nodes/pve-1/qemu/102/status/stop", nil)
	e.sim.Advance(time.Second)
	equal(t, "QEMU stop of a stopped VM", e.taskStatus(t, qs)["exitstatus"], any("OK"))
	must(t, e.sim.SetTime(testStart().Add(time.Hour)))
	if err := e.sim.SetTime(testStart()); err == nil {
		t.Fatal("the clock ran backwards")
	}
}

// TestTaskStatusFilters: errors=1 drops only OK tasks (a running one is
// "unknown" and stays); statusfilter picks by type; a killed worker is an
// error.
func TestTaskStatusFilters(t *testing.T) {
	t.Parallel()
	e := setup(t, frozen())
	equal(t, "ok", e.finish(t, e.upid(t, "POST", "/nodes/pve-1/lxc/101/snapshot", form("snapname", "s1"))), "OK")
	equal(t, "error", e.finish(t, e.upid(t, "POST", "/nodes/pve-1/lxc/101/snapshot", form("snapname", "s1"))), "snapshot name 's1' already used")
	e.sim.DieNextTask("qmsnapshot", 102)
	equal(t, "died", e.finish(t, e.upid(t, "POST", "/nodes/pve-1/qemu/102/snapshot", form("snapname", "s1"))), "unexpected status")
	e.upid(t, "POST", "/nodes/pve-1/lxc/103/status/start", nil)
	count := func(params ...string) int {
		return len(e.call(t, adminToken, "GET", "/nodes/pve-1/tasks", form(append([]string{"source", "all"}, params...)...)).dataList(t))
	}
	equal(t, "all", count(), 4)
	equal(t, "errors=1", count("errors", "1"), 3)
	equal(t, "statusfilter=ok", count("statusfilter", "ok"), 1)
	equal(t, "statusfilter=error", count("statusfilter", "error"), 2)
	equal(t, "statusfilter=unknown (running)", count("statusfilter", "unknown"), 1)
	equal(t, "userfilter, case-insensitive", count("userfilter", "BOXSNAP"), 4)
	equal(t, "userfilter root", count("userfilter", "root@pam"), 0)
}

// TestRealisticDurations: with Config.Realistic a take lasts what was
// measured on Proxmox VE, and a full clone grows with what the guest uses.
func TestRealisticDurations(t *testing.T) {
	t.Parallel()
	e := setup(t, Config{StartTime: testStart(), Realistic: true})
	upid := e.upid(t, "POST", "/nodes/pve-1/lxc/101/snapshot", form("snapname", "s1"))
	e.sim.Advance(699 * time.Millisecond)
	equal(t, "LXC take at 0.699 s", e.taskStatus(t, upid)["status"], any("running"))
	e.sim.Advance(time.Millisecond)
	equal(t, "LXC take at 0.7 s", e.taskStatus(t, upid)["status"], any("stopped"))
	must(t, e.sim.AddGuest(GuestSpec{VMID: 170, Type: QEMU, Node: "pve-1", Storage: "local-lvm", Written: 8 * gib}))
	upid = e.upid(t, "POST", "/nodes/pve-1/qemu/170/clone", form("newid", "171"))
	e.sim.Advance(12999 * time.Millisecond)
	equal(t, "QEMU clone of 8 GiB at 12.999 s", e.taskStatus(t, upid)["status"], any("running"))
	e.sim.Advance(time.Millisecond)
	equal(t, "QEMU clone of 8 GiB at 13 s", e.taskStatus(t, upid)["status"], any("stopped"))
}

// TestStalledTaskRunsUntilFinished: the next task of a stalled type runs
// however far the clock moves, its work half done (the snapshot's lock),
// until FinishTask ends it; then its work completes and it ends OK. The
// tasks after it, and other types, keep their durations, and a task not
// stalled cannot be finished early.
func TestStalledTaskRunsUntilFinished(t *testing.T) {
	t.Parallel()
	e := setup(t, frozen())
	e.sim.StallNextTask("vzsnapshot", 101)
	upid := e.upid(t, "POST", "/nodes/pve-1/lxc/101/snapshot", form("snapname", "s1"))
	e.sim.Advance(24 * time.Hour)
	equal(t, "a stalled task a day on", e.taskStatus(t, upid)["status"], any("running"))
	equal(t, "its guest's lock", e.guest(t, 101).Lock, "snapshot")
	other := e.upid(t, "POST", "/nodes/pve-1/qemu/102/status/stop", nil)
	equal(t, "another type", e.finish(t, other), "OK")
	if err := e.sim.FinishTask(other); err == nil {
		t.Fatal("FinishTask ended a task that was not stalled")
	}

	must(t, e.sim.FinishTask(upid))
	st := e.taskStatus(t, upid)
	equal(t, "after FinishTask", st["status"], any("stopped"))
	equal(t, "its exit", st["exitstatus"], any("OK"))
	g := e.guest(t, 101)
	equal(t, "its guest's lock after", g.Lock, "")
	if len(g.Snapshots) == 0 || g.Snapshots[len(g.Snapshots)-1].Name != "s1" || g.Snapshots[len(g.Snapshots)-1].SnapState != "" {
		t.Fatalf("the finished take's snapshots: %+v", g.Snapshots)
	}
	if err := e.sim.FinishTask(upid); err == nil {
		t.Fatal("FinishTask ended a task twice")
	}
	next := e.upid(t, "POST", "/nodes/pve-1/lxc/101/snapshot", form("snapname", "s2"))
	equal(t, "the next take", e.finish(t, next), "OK")
}
