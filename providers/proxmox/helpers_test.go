package proxmox_test

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/json"
	"os"
	"testing"
	"time"

	telmate "github.com/Telmate/proxmox-api-go/proxmox"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/dbtest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/proxmox"
	"github.com/boxsnap/boxsnap/providers/pvesim"
)

// TestMain runs the tests, or, when a test starts this binary as a worker
// process (workerEnv set), a boxsnap worker that the test can kill.
func TestMain(m *testing.M) {
	if os.Getenv(workerEnv) != "" {
		os.Exit(runWorkerProcess())
	}
	os.Exit(dbtest.Main(m))
}

const (
	tokenID     = "boxsnap@pve!boxsnap"
	tokenSecret = "0b5e55ed-1111-4222-8333-444455556666"
	install     = "in7testinstall1"
	gib         = int64(1) << 30
	// Guests every test cluster has.
	lxcThin   = 214 // LXC on pve-1's LVM-thin, running, with the identity reset
	qemuThin  = 215 // QEMU on pve-1's LVM-thin, running
	winThin   = 216 // QEMU Windows on pve-1
	lxcZFS    = 221 // LXC on pve-2's ZFS, running
	lxcTmpl   = 300 // an LXC template on pve-1, with the identity reset
	qemuTmpl  = 301 // a QEMU template on pve-1, with the identity reset
	lxcThick  = 230 // LXC on pve-1's thick LVM: no snapshots
	simTaskMS = 20
)

type simEnv struct {
	sim *pvesim.Sim
	be  *proxmox.Backend
	url string
}

type simOpts struct {
	zfsOn   bool
	noAudit bool // a token without Sys.Audit on /nodes
	extra   func(s *pvesim.Sim)
	// durations override a task type's duration ("vzrollback": 1 s).
	durations map[string]time.Duration
	// realistic gives takes and full clones the task times measured on
	// Proxmox VE.
	realistic bool
	// taskTime is every other task's time; 0: simTaskMS.
	taskTime time.Duration
	// pollEvery is the backend's task poll pace; 0: 10 ms.
	pollEvery time.Duration
}

// newSim starts a simulator (pve-1 with LVM-thin and thick LVM, pve-2 with
// ZFS) with a few guests and boxsnap's token, and a backend talking to it
// through the Telmate client over HTTPS with its certificate verified.
func newSim(t testing.TB, o simOpts) *simEnv {
	t.Helper()
	taskTime := o.taskTime
	if taskTime == 0 {
		taskTime = simTaskMS * time.Millisecond
	}
	sim, err := pvesim.New(pvesim.Config{TaskDuration: taskTime, TaskDurations: o.durations, Realistic: o.realistic})
	must(t, err)
	must(t, sim.AddNode("pve-1"))
	must(t, sim.AddNode("pve-2"))
	must(t, sim.AddStorage("pve-1", pvesim.StorageSpec{ID: "local-lvm", Type: pvesim.StorageLVMThin, Total: 500 * gib}))
	must(t, sim.AddStorage("pve-1", pvesim.StorageSpec{ID: "thick", Type: pvesim.StorageLVM, Total: 500 * gib}))
	must(t, sim.AddStorage("pve-2", pvesim.StorageSpec{ID: "local-zfs", Type: pvesim.StorageZFSPool, Total: 500 * gib}))
	for _, g := range []pvesim.GuestSpec{
		{VMID: lxcThin, Type: pvesim.LXC, Node: "pve-1", Name: "amber-fox", Storage: "local-lvm", Running: true, OnBoot: true, Written: 3 * gib, Tags: "boxsnap;boxsnap-reset-1"},
		{VMID: qemuThin, Type: pvesim.QEMU, Node: "pve-1", Name: "quiet-owl", Storage: "local-lvm", DiskSize: 32 * gib, Memory: 4096, Running: true, Tags: "boxsnap;boxsnap-reset-1"},
		{VMID: winThin, Type: pvesim.QEMU, Node: "pve-1", Name: "win-desk", Storage: "local-lvm", DiskSize: 64 * gib, Memory: 8192, OSType: "win11"},
		{VMID: lxcZFS, Type: pvesim.LXC, Node: "pve-2", Name: "river-elk", Storage: "local-zfs", Running: true, Tags: "boxsnap;boxsnap-reset-1"},
		{VMID: lxcTmpl, Type: pvesim.LXC, Node: "pve-1", Name: "tmpl", Storage: "local-lvm", Tags: "boxsnap;boxsnap-reset-1"},
		{VMID: qemuTmpl, Type: pvesim.QEMU, Node: "pve-1", Name: "qtmpl", Storage: "local-lvm", Tags: "boxsnap;boxsnap-reset-1"},
		{VMID: lxcThick, Type: pvesim.LXC, Node: "pve-1", Name: "thick-box", Storage: "thick"},
	} {
		must(t, sim.AddGuest(g))
	}
	if o.extra != nil {
		o.extra(sim)
	}
	grants := []pvesim.Grant{
		{Path: "/vms", Privs: []string{"PVEVMAdmin"}, Propagate: true},
		{Path: "/storage", Privs: []string{"PVEDatastoreUser"}, Propagate: true},
	}
	if !o.noAudit {
		grants = append(grants, pvesim.Grant{Path: "/nodes", Privs: []string{"Sys.Audit"}, Propagate: true})
	}
	must(t, sim.AddToken(tokenID, tokenSecret, grants...))
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	url, err := sim.Start(ctx)
	must(t, err)
	// The template: made through the API, as an admin would.
	c := adminClient(t, sim, url)
	// Posted without the client's 2 s wait; the task's end is polled below.
	must(t, c.Post(ctx, nil, "/nodes/pve-1/lxc/300/template"))
	must(t, c.Post(ctx, nil, "/nodes/pve-1/qemu/301/template"))
	waitFor(t, "guests 300 and 301 templates", func() bool {
		g, _ := sim.Guest(lxcTmpl)
		q, _ := sim.Guest(qemuTmpl)
		return g.Template && q.Template
	})
	be, err := proxmox.New(proxmox.Config{ID: "pve-lab", URL: url, TokenID: tokenID, TokenSecret: tokenSecret, CAPool: sim.CertPool(),
		Install: install, PollEvery: cmp.Or(o.pollEvery, 10*time.Millisecond), ZFSOrderForLiveChecksOnly: o.zfsOn})
	must(t, err)
	return &simEnv{sim: sim, be: be, url: url}
}

// adminClient is a Telmate client with an admin's token (the person at the
// Proxmox console), for changes boxsnap would not make.
func adminClient(t testing.TB, sim *pvesim.Sim, url string) *telmate.Client {
	t.Helper()
	const id, secret = "root@pam!admin", "aaaaaaaa-1111-4222-8333-444455556666"
	_ = sim.AddToken(id, secret, pvesim.Grant{Path: "/", Privs: []string{"Administrator"}, Propagate: true})
	c, err := telmate.NewClient(url+"/api2/json", nil, "", sim.TLSConfig(), "", 30)
	must(t, err)
	c.SetAPIToken(id, secret)
	return c
}

func guest(kind, node string, vmid int) providers.Guest {
	return providers.Guest{Backend: "pve-lab", Kind: kind, Host: node, Ref: itoa(vmid), Generation: 1}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// waitFor polls cond every few milliseconds until it holds, failing the test
// after 20 s.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited 20 s for %s", what)
		}
		<-tick.C
	}
}

func newID(prefix string) string {
	const letters = "abcdefghijklmnopqrstuvwxyz0123456789"
	var p [12]byte
	_, _ = rand.Read(p[:])
	out := []byte(prefix)
	for _, c := range p {
		out = append(out, letters[int(c)%len(letters)])
	}
	return string(out)
}

// workerCore is a core on a fresh database of this test's install, with the
// simulator's backend beside the local one and no workers of its own: this
// process admits and reads, and the worker processes a test starts run. It
// answers the core, its pool, the database's address and the local
// backend's folder, which the worker processes are given.
func workerCore(t *testing.T, e *simEnv) (*coretest.Env, *pgxpool.Pool, string, string) {
	t.Helper()
	dsn := dbtest.NewDSN(t)
	pool, err := pgxpool.New(context.Background(), dsn)
	must(t, err)
	t.Cleanup(pool.Close)
	root := t.TempDir()
	env, err := coretest.Build(context.Background(), pool, coretest.Options{LocalRoot: root, NoWorkers: true, Install: install,
		Extra: []snapshots.Backend{{ID: "pve-lab", Kind: "proxmox", Label: "pve-lab", Snap: e.be, Boxes: e.be}}})
	must(t, err)
	return env, pool, dsn, root
}
