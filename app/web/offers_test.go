package web

import (
	"context"
	"html"
	"regexp"
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/proxmox"
	"github.com/boxsnap/boxsnap/providers/pvesim"
)

var tagRE = regexp.MustCompile(`<[^>]*>`)

// simulatedProxmox starts pvesim's demo cluster (pve-1 on LVM-thin, pve-2
// on ZFS) and a Proxmox backend on it, as the demo does.
// simInstall is the install of the sites a simulated Proxmox backend joins
// (coretest.Options.Install): the backend labels its guests with it, and
// finds a held copy its clone made by it.
const simInstall = "in0websimproxmox"

func simulatedProxmox(t *testing.T) (snapshots.Backend, *pvesim.Sim) {
	t.Helper()
	return simulatedProxmoxZFS(t, false)
}

// simulatedProxmoxZFS is simulatedProxmox with ZFS's restore order's switch
// on or off (ZFSOrderForLiveChecksOnly).
func simulatedProxmoxZFS(t *testing.T, zfsOn bool) (snapshots.Backend, *pvesim.Sim) {
	t.Helper()
	sim, err := pvesim.New(pvesim.Config{TaskDuration: -1})
	if err != nil {
		t.Fatal(err)
	}
	const secret = "5f0c4d1e-2b3a-4c5d-8e9f-0a1b2c3d4e5f"
	if err := sim.SeedDemo(secret); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	u, err := sim.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Close() })
	be, err := proxmox.New(proxmox.Config{ID: "pve-demo", URL: u, TokenID: pvesim.DemoTokenID, TokenSecret: secret,
		CAPool: sim.CertPool(), Pool: pvesim.DemoPool, Install: simInstall, ZFSOrderForLiveChecksOnly: zfsOn})
	if err != nil {
		t.Fatal(err)
	}
	return snapshots.Backend{ID: "pve-demo", Kind: "proxmox", Label: "Proxmox VE (simulated)", Simulated: true, Snap: be, Boxes: be}, sim
}

// TestWhatEachBackendOffers: Settings has one row per backend and kind,
// read from plans (ZFS "restores off until checked", Windows without
// forks), and the tab's line says what needs the owner from real plans: no
// "cannot take snapshots" for a backend that can, and a storage past the
// room setting.
func TestWhatEachBackendOffers(t *testing.T) {
	t.Parallel()
	be, sim := simulatedProxmox(t)
	s := newSite(t, coretest.Options{Extra: []snapshots.Backend{be}, NoWorkers: true, Install: simInstall})
	ctx := context.Background()
	s.env.Box(t, snapshots.Owner(), "amber-fox")
	for _, g := range []struct{ vmid, name, kind string }{
		{"214", "grey-ridge", "lxc"}, {"215", "quiet-owl", "qemu"}, {"216", "win-desk", "qemu-windows"}, {"221", "tidy-glade", "lxc"},
	} {
		if _, err := s.env.Boxes.AcquireBox(ctx, snapshots.Owner(), snapshots.BoxRequest{Name: g.name, Backend: be.ID, Kind: g.kind, Adopt: g.vmid}); err != nil {
			t.Fatalf("adopt %s: %v", g.name, err)
		}
	}
	if err := sim.FillStorage("pve-1", "local-lvm", 91); err != nil {
		t.Fatal(err)
	}
	body := html.UnescapeString(s.do(t, "GET", "/settings/snapshots/backends", nil, nil).Body.String())
	rows := map[string]string{}
	for _, tr := range strings.Split(body, "<tr>")[2:] {
		text := strings.Join(strings.Fields(tagRE.ReplaceAllString(tr, " ")), " ")
		rows[text] = text
	}
	// The local backend's forks share their snapshot's files where its
	// boxes have disks of their own and an overlay mounts (as root).
	localForks := "forks by full copy"
	if s.env.Local.Snapshotting("linux").Fork == providers.ForkShared {
		localForks = "forks share the snapshot's files"
	}
	for _, want := range []string{
		"this host Linux ext4",
		"Linux Disk; restores any; " + localForks + "; keeps as is",
		"Proxmox VE (simulated) simulator LXC pve-1 · local-lvm (lvmthin), 91% full LXC Disk; restores any; forks by full copy; keeps by held copy · no charge pve-1's storage is past 85% full",
		"pve-1 · local-lvm (lvmthin), 91% full QEMU Disk, or disk and memory; restores any; forks by full copy; keeps by held copy · no charge",
		"pve-2 · local-zfs (zfspool), 2% full LXC Disk; restores off until checked; forks by full copy; keeps by held copy · no charge pve-2 uses ZFS, whose restores are off until they are checked live. Fork a snapshot instead.",
		"Windows (QEMU) Disk; restores any; no forks; no Keep · no charge",
	} {
		found := false
		for r := range rows {
			found = found || strings.Contains(r, want)
		}
		if !found {
			t.Errorf("no row of What each backend offers says %q; the rows:\n%s", want, strings.Join(keys(rows), "\n"))
		}
	}
	line := html.UnescapeString(s.do(t, "GET", "/boxes/snapshots", nil, nil).Body.String())
	if strings.Contains(line, "cannot take snapshots") || !strings.Contains(line, "pve-1's storage is 91% full") {
		t.Fatalf("the tab's line does not say what the plans say:\n%s", line)
	}
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
