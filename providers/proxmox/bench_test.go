package proxmox_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/proxmox"
	"github.com/boxsnap/boxsnap/providers/pvesim"
)

// Scale of the sweep benchmark (the brief's aim: 500 guests with 5
// snapshots each on 3 nodes).
const (
	benchGuests    = 500
	benchSnapshots = 5
	benchNodes     = 3
)

// BenchmarkSweep500 measures one sweep (the reconcile, then the outside-
// restore scan) over 500 guests with 5 labelled snapshots each on 3
// simulated nodes: its time, and the API calls it makes, counted by pvesim.
//
//	go test -run '^$' -bench BenchmarkSweep500 -benchtime 5x ./providers/proxmox/
func BenchmarkSweep500(b *testing.B) {
	sim, err := pvesim.New(pvesim.Config{TaskDuration: -1})
	must(b, err)
	for n := 1; n <= benchNodes; n++ {
		node := fmt.Sprintf("pve-%d", n)
		must(b, sim.AddNode(node))
		must(b, sim.AddStorage(node, pvesim.StorageSpec{ID: "local-lvm", Type: pvesim.StorageLVMThin, Total: 100 << 40}))
	}
	for i := range benchGuests {
		vmid := 1000 + i
		node := fmt.Sprintf("pve-%d", i%benchNodes+1)
		must(b, sim.AddGuest(pvesim.GuestSpec{VMID: vmid, Type: pvesim.LXC, Node: node, Name: fmt.Sprintf("g%d", vmid), Storage: "local-lvm", Running: true}))
	}
	must(b, sim.AddToken(tokenID, tokenSecret,
		pvesim.Grant{Path: "/vms", Privs: []string{"PVEVMAdmin"}, Propagate: true},
		pvesim.Grant{Path: "/storage", Privs: []string{"PVEDatastoreUser"}, Propagate: true},
		pvesim.Grant{Path: "/nodes", Privs: []string{"Sys.Audit"}, Propagate: true}))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	url, err := sim.Start(ctx)
	must(b, err)
	be, err := proxmox.New(proxmox.Config{ID: "pve-lab", URL: url, TokenID: tokenID, TokenSecret: tokenSecret, CAPool: sim.CertPool(),
		Install: install, PollEvery: 5 * time.Millisecond})
	must(b, err)
	e := &simEnv{sim: sim, be: be, url: url}
	env := newCore(b, e, b.TempDir(), nil)
	env.Stop() // no periodic sweep of River's runs beside the measured ones
	for i := range benchGuests {
		vmid := 1000 + i
		box := adopt(b, env, fmt.Sprintf("g%d", vmid), proxmox.KindLXC, vmid)
		for range benchSnapshots {
			id := newID("sn")
			name, err := proxmox.SnapshotName(id)
			must(b, err)
			if _, err := sim.OutsideSnapshot(vmid, name, proxmox.Describe(providers.Label{Install: install, Box: box.ID, Snapshot: id})); err != nil {
				b.Fatal(err)
			}
		}
	}
	// The first sweep records every snapshot again and logs each outside
	// take once; the benchmark measures the sweeps after it.
	sweep := func() {
		if _, err := env.Sweeps.Reconcile(ctx); err != nil {
			b.Fatal(err)
		}
		if _, err := env.Sweeps.ScanOutside(ctx); err != nil {
			b.Fatal(err)
		}
	}
	sweep()
	var calls map[string]int
	b.ResetTimer()
	for b.Loop() {
		sim.ResetCalls()
		sweep()
		calls = sim.Calls()
	}
	b.StopTimer()
	total, table := benchCalls(calls)
	b.ReportMetric(float64(total), "calls/sweep")
	b.ReportMetric(float64(calls["GET /nodes/{node}/{type}/{vmid}/snapshot"]), "listings/sweep")
	b.ReportMetric(float64(calls["GET /nodes/{node}/tasks"]), "tasklists/sweep")
	b.Logf("API calls of one sweep over %d guests, %d snapshots each, on %d nodes:\n%s", benchGuests, benchSnapshots, benchNodes, table)
	if n := calls["GET /nodes/{node}/{type}/{vmid}/snapshot"]; n > benchGuests {
		b.Fatalf("%d snapshot listings for %d guests: more than one per guest", n, benchGuests)
	}
	if n := calls["GET /nodes/{node}/tasks"]; n > benchNodes {
		b.Fatalf("%d task lists for %d nodes: more than one per node", n, benchNodes)
	}
	var count int
	must(b, env.Pool.QueryRow(ctx, "SELECT count(*) FROM snapshots WHERE state = 'ready'").Scan(&count))
	if count != benchGuests*benchSnapshots {
		b.Fatalf("%d ready records, want %d", count, benchGuests*benchSnapshots)
	}
}

func benchCalls(calls map[string]int) (int, string) {
	keys := make([]string, 0, len(calls))
	total := 0
	for k, v := range calls {
		keys = append(keys, k)
		total += v
	}
	sort.Strings(keys)
	var sb strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&sb, "  %5d %s\n", calls[k], k)
	}
	return total, sb.String()
}
