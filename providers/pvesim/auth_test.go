package pvesim

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	telmate "github.com/Telmate/proxmox-api-go/proxmox"
)

// TestTokenAuth: a bad secret or unknown token is 401 with an empty body;
// the header is split at its last '=', so a secret holding '=' cannot work
// (Proxmox's secrets are UUIDs).
func TestTokenAuth(t *testing.T) {
	t.Parallel()
	e := setup(t, instant())
	must(t, e.sim.AddToken("boxsnap@pve!eq", "abc=def", Grant{Path: "/", Privs: []string{"PVEAuditor"}, Propagate: true}))
	must(t, e.sim.AddToken("boxsnap@pve!ok", testSecret, Grant{Path: "/", Privs: []string{"PVEAuditor"}, Propagate: true}))
	for _, tc := range []struct {
		header string
		status int
	}{
		{"PVEAPIToken=" + adminToken + "=wrong", http.StatusUnauthorized},
		{"PVEAPIToken=nobody@pve!x=" + testSecret, http.StatusUnauthorized},
		{"PVEAPIToken=boxsnap@pve!eq=abc=def", http.StatusUnauthorized},
		{"PVEAPIToken=boxsnap@pve!ok=" + testSecret, http.StatusOK},
		{"", http.StatusUnauthorized},
	} {
		req, _ := http.NewRequest("GET", e.base+apiPrefix+"/nodes", nil)
		if tc.header != "" {
			req.Header.Set("Authorization", tc.header)
		}
		resp, err := e.hc.Do(req)
		must(t, err)
		var n int64
		if resp.StatusCode == http.StatusUnauthorized {
			n = resp.ContentLength
		}
		resp.Body.Close()
		equal(t, "status for "+strings.SplitN(tc.header, "=", 2)[0], resp.StatusCode, tc.status)
		equal(t, "401 body length", n, int64(0))
	}
}

// TestTicketLogin: the Telmate client's password login gets a ticket and a
// CSRF token; a write without the CSRF header is refused.
func TestTicketLogin(t *testing.T) {
	t.Parallel()
	e := setup(t, instant())
	must(t, e.sim.AddUser("alice@pve", "correct horse", Grant{Path: "/", Privs: []string{"PVEVMAdmin"}, Propagate: true}))
	ctx := context.Background()
	c, err := telmate.NewClient(e.base+apiPrefix, nil, "", e.sim.TLSConfig(), "", telmateTimeout)
	must(t, err)
	if err := c.Login(ctx, "alice@pve", "wrong", ""); err == nil {
		t.Fatal("login with a wrong password worked")
	}
	must(t, c.Login(ctx, "alice@pve", "correct horse", ""))
	must(t, telmate.ConfigSnapshot{Name: "by-ticket"}.Create(ctx, c, telmate.NewVmRef(102)))
	equal(t, "snapshot by ticket", e.guest(t, 102).Parent, "by-ticket")

	// By hand: cookie without the CSRF header on a POST.
	a := e.call(t, "", "POST", "/access/ticket", form("username", "alice", "realm", "pve", "password", "correct horse"))
	tk := a.dataMap(t)["ticket"].(string)
	csrf := a.dataMap(t)["CSRFPreventionToken"].(string)
	post := func(withCSRF bool) int {
		req, _ := http.NewRequest("POST", e.base+apiPrefix+"/nodes/pve-1/qemu/102/snapshot", strings.NewReader(url.Values{"snapname": {"x1"}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.AddCookie(&http.Cookie{Name: "PVEAuthCookie", Value: tk})
		if withCSRF {
			req.Header.Set("CSRFPreventionToken", csrf)
		}
		resp, err := e.hc.Do(req)
		must(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	equal(t, "without CSRF", post(false), http.StatusUnauthorized)
	equal(t, "with CSRF", post(true), http.StatusOK)
}

// TestPermissions: privileges propagate down paths, a more specific ACL
// replaces an inherited one, a pool's ACL reaches its guests, and
// /access/permissions reports what the caller holds.
func TestPermissions(t *testing.T) {
	t.Parallel()
	e := setup(t, frozen())
	must(t, e.sim.AddGuest(GuestSpec{VMID: 300, Type: LXC, Node: "pve-1", Name: "pooled", Storage: "local-lvm", Pool: "boxsnap"}))
	must(t, e.sim.AddToken("boxsnap@pve!pool", "pw",
		Grant{Path: "/pool/boxsnap", Privs: []string{"PVEVMAdmin"}, Propagate: true},
		Grant{Path: "/vms", Privs: []string{"VM.Audit"}, Propagate: true},
		Grant{Path: "/vms/101", Privs: []string{"NoAccess"}},
		Grant{Path: "/storage/local-lvm", Privs: []string{"Datastore.Audit"}},
	))
	call := func(method, path string, params url.Values) answer {
		e2 := *e
		req, _ := http.NewRequest(method, e.base+apiPrefix+path+"?"+params.Encode(), nil)
		req.Header.Set("Authorization", "PVEAPIToken=boxsnap@pve!pool=pw")
		resp, err := e2.hc.Do(req)
		must(t, err)
		defer resp.Body.Close()
		return answer{status: resp.StatusCode, reason: strings.TrimPrefix(resp.Status, itoa(resp.StatusCode)+" ")}
	}
	equal(t, "pool member snapshot", call("POST", "/nodes/pve-1/lxc/300/snapshot", form("snapname", "s1")).status, http.StatusOK)
	equal(t, "outside the pool", call("POST", "/nodes/pve-1/qemu/102/snapshot", form("snapname", "s1")).reason, "Permission check failed (/vms/102, VM.Snapshot)")
	equal(t, "NoAccess replaces the inherited audit", call("GET", "/nodes/pve-1/lxc/101/config", nil).reason, "Permission check failed (/vms/101, VM.Audit)")
	equal(t, "rollback needs either", call("POST", "/nodes/pve-1/qemu/102/snapshot/s1/rollback", nil).reason, "Permission check failed (/vms/102, VM.Snapshot|VM.Snapshot.Rollback)")
	equal(t, "storage status", call("GET", "/nodes/pve-1/storage/local-lvm/status", nil).status, http.StatusOK)
	equal(t, "other storage", call("GET", "/nodes/pve-2/storage/local-zfs/status", nil).reason, "Permission check failed (/storage/local-zfs, Datastore.Audit|Datastore.AllocateSpace)")
	equal(t, "node status needs Sys.Audit", call("GET", "/nodes/pve-1/status", nil).reason, "Permission check failed (/nodes/pve-1, Sys.Audit)")

	a := e.call(t, adminToken, "GET", "/access/permissions", form("userid", "boxsnap@pve!pool"))
	perms := a.dataMap(t)
	pool, _ := perms["/pool/boxsnap"].(map[string]any)
	equal(t, "pool VM.Snapshot propagates", pool["VM.Snapshot"], any(float64(1)))
	vms, _ := perms["/vms"].(map[string]any)
	equal(t, "/vms VM.Audit", vms["VM.Audit"], any(float64(1)))
	if _, ok := perms["/vms/101"]; ok {
		t.Fatal("a path without privileges is listed")
	}
	st, _ := perms["/storage/local-lvm"].(map[string]any)
	equal(t, "non-propagating", st["Datastore.Audit"], any(float64(0)))
	// The cluster list shows only guests the caller may audit.
	n := 0
	for _, r := range e.call(t, auditToken, "GET", "/cluster/resources", form("type", "vm")).dataList(t) {
		if r["type"] == "lxc" || r["type"] == "qemu" {
			n++
		}
	}
	equal(t, "audit token sees every guest", n, 6)
}

// TestParamsAndPaths: unknown parameters, unknown guests and unknown paths
// are answered in Proxmox's words.
func TestParamsAndPaths(t *testing.T) {
	t.Parallel()
	e := setup(t, frozen())
	a := e.call(t, adminToken, "POST", "/nodes/pve-1/lxc/101/snapshot", form("snapname", "ok1", "vmstate", "0"))
	errs, _ := a.body["errors"].(map[string]any)
	equal(t, "LXC vmstate", errs["vmstate"], any("property is not defined in schema and the schema does not allow additional properties\n"))
	equal(t, "400 message", a.body["message"], any("Parameter verification failed.\n"))
	a = e.call(t, adminToken, "GET", "/nodes/pve-1/lxc/999/config", nil)
	equal(t, "unknown guest", a.reason, "Configuration file 'nodes/pve-1/lxc/999.conf' does not exist")
	a = e.call(t, adminToken, "GET", "/nodes/pve-2/qemu/102/config", nil)
	equal(t, "guest on another node", a.reason, "Configuration file 'nodes/pve-2/qemu-server/102.conf' does not exist")
	a = e.call(t, adminToken, "GET", "/nodes/pve-1/bogus", nil)
	equal(t, "unknown path", a.status, http.StatusNotImplemented)
	equal(t, "unknown path words", a.reason, "Method 'GET /nodes/pve-1/bogus' not implemented")
	a = e.call(t, adminToken, "GET", "/version", nil)
	equal(t, "version release", a.dataMap(t)["release"], any(simulatorRelease))
}

// TestConfigDigestAndFields: the config answers the fields a snapshot
// manager reads; a stale digest is refused in each type's words.
func TestConfigDigestAndFields(t *testing.T) {
	t.Parallel()
	e := setup(t, frozen())
	lxc := e.call(t, adminToken, "GET", "/nodes/pve-1/lxc/101/config", nil).dataMap(t)
	equal(t, "LXC memory is a number", lxc["memory"], any(float64(2048)))
	equal(t, "LXC onboot", lxc["onboot"], any(float64(1)))
	equal(t, "LXC rootfs", lxc["rootfs"], any("local-lvm:vm-101-disk-0,size=8G"))
	if !strings.HasPrefix(lxc["net0"].(string), "name=eth0,bridge=vmbr0,hwaddr=BC:24:11:") {
		t.Fatalf("LXC net0 %q", lxc["net0"])
	}
	qm := e.call(t, adminToken, "GET", "/nodes/pve-1/qemu/102/config", nil).dataMap(t)
	equal(t, "QEMU memory is a string", qm["memory"], any("4096"))
	if !strings.HasPrefix(qm["smbios1"].(string), "uuid=") || !strings.HasPrefix(qm["net0"].(string), "virtio=BC:24:11:") {
		t.Fatalf("QEMU smbios1 %q net0 %q", qm["smbios1"], qm["net0"])
	}
	stale := lxc["digest"].(string)
	a := e.call(t, adminToken, "PUT", "/nodes/pve-1/lxc/101/config", form("tags", "Zeta;alpha", "digest", stale))
	equal(t, "fresh digest", a.status, http.StatusOK)
	equal(t, "tags sorted, lowercased", e.guest(t, 101).Config["tags"], "alpha;zeta")
	a = e.call(t, adminToken, "PUT", "/nodes/pve-1/lxc/101/config", form("onboot", "0", "digest", stale))
	equal(t, "LXC stale digest", a.reason, "detected modified configuration - file changed by other user? Try again.")
	a = e.call(t, adminToken, "PUT", "/nodes/pve-1/qemu/102/config", form("onboot", "0", "digest", stale))
	equal(t, "QEMU stale digest", a.reason, "checksum mismatch (file change by other user?)")
	a = e.call(t, auditToken, "PUT", "/nodes/pve-1/qemu/102/config", form("net0", "virtio=BC:24:11:00:00:01,bridge=vmbr0,link_down=1"))
	equal(t, "network needs its privilege", a.reason, "Permission check failed (/vms/102, VM.Config.Network)")
	a = e.call(t, adminToken, "PUT", "/nodes/pve-1/qemu/102/config", form("net0", "virtio=BC:24:11:00:00:01,bridge=vmbr0,link_down=1", "onboot", "0"))
	equal(t, "disarm", a.status, http.StatusOK)
	equal(t, "link down", e.guest(t, 102).Config["net0"], "virtio=BC:24:11:00:00:01,bridge=vmbr0,link_down=1")
}
