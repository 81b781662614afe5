package cli_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/boxsnap/boxsnap/app/api"
	"github.com/boxsnap/boxsnap/app/cli"
	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/providers/proxmox"
	"github.com/boxsnap/boxsnap/providers/pvesim"
)

// TestCLIRelease: `boxsnap box release` of a Proxmox box whose kept snapshot
// cannot be copied (its storage full) stops with the release's words and
// deletes nothing; --delete-kept then releases it, the kept snapshot with it.
func TestCLIRelease(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	sim, err := pvesim.New(pvesim.Config{TaskDuration: -1})
	if err != nil {
		t.Fatal(err)
	}
	const secret = "5f0c4d1e-2b3a-4c5d-8e9f-0a1b2c3d4e5f"
	if err := sim.SeedDemo(secret); err != nil {
		t.Fatal(err)
	}
	sctx, cancel := context.WithCancel(ctx)
	t.Cleanup(cancel)
	u, err := sim.Start(sctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Close() })
	pve, err := proxmox.New(proxmox.Config{ID: "pve-demo", URL: u, TokenID: pvesim.DemoTokenID, TokenSecret: secret,
		CAPool: sim.CertPool(), Pool: pvesim.DemoPool, Install: "test"})
	if err != nil {
		t.Fatal(err)
	}
	be := snapshots.Backend{ID: "pve-demo", Kind: "proxmox", Label: "Proxmox VE (simulated)", Simulated: true, Snap: pve, Boxes: pve}
	e := coretest.New(t, coretest.Options{Extra: []snapshots.Backend{be}})
	r := chi.NewRouter()
	r.Mount("/api/v1", api.New(e.APIOptions()))
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)
	_, token, err := e.Auth.CreateAPIToken(ctx, "cli")
	if err != nil {
		t.Fatal(err)
	}
	g := &rig{Env: e, url: srv.URL, token: token}
	box := func(args ...string) (int, string, string) {
		var out, errw strings.Builder
		code := cli.RunBox(ctx, args, cli.Env{Getenv: func(k string) string { return g.env()[k] }}, &out, &errw)
		if strings.Contains(out.String()+errw.String(), token) {
			t.Fatalf("the token was printed")
		}
		return code, out.String(), errw.String()
	}

	if _, err := e.Boxes.AcquireBox(ctx, snapshots.Owner(), snapshots.BoxRequest{Name: "amber-fox", Backend: be.ID, Kind: "lxc", Adopt: "214"}); err != nil {
		t.Fatal(err)
	}
	g.ok(t, "take", "amber-fox", "--name", "Thu 09:15")
	g.ok(t, "keep", "amber-fox", "Thu 09:15")
	if err := sim.FillStorage("pve-1", "local-lvm", 84); err != nil {
		t.Fatal(err)
	}

	// The release moves the box to the trash: its guest stays, stopped,
	// with its links down and onboot off, like an earlier guest.
	code, out, errw := box("release", "amber-fox")
	if code != cli.ExitOK {
		t.Fatalf("release into the trash: exit %d, %q %q", code, out, errw)
	}
	says(t, out, "Moved amber-fox to the trash until ")
	gi, err := sim.Guest(214)
	if err != nil {
		t.Fatalf("the guest in the trash is gone: %v", err)
	}
	if gi.Running || gi.OnBoot || !strings.Contains(gi.Config["net0"], "link_down=1") {
		t.Fatalf("the guest in the trash: running %v, onboot %v, net0 %q; want stopped, onboot off, link down", gi.Running, gi.OnBoot, gi.Config["net0"])
	}
	says(t, g.ok(t, "list", "amber-fox"), "Thu 09:15")
	says(t, boxOK(t, box, "trash"), "amber-fox")

	// Emptying it stops where the kept snapshot cannot be copied.
	code, out, errw = box("trash-empty", "amber-fox")
	if code != cli.ExitRefused || out != "" {
		t.Fatalf("emptying the trash with no room for the copy: exit %d, %q %q", code, out, errw)
	}
	says(t, errw, "boxsnap box trash-empty: Release did not finish: boxsnap could not copy ‘Thu 09:15’ (pve-1 has ", "free, and it needs ",
		"Run it again, or boxsnap box release amber-fox --delete-kept to release it and delete its kept snapshots.")
	if b, err := e.Core.Box(ctx, snapshots.Owner(), "amber-fox"); err != nil || b.State != "trashed" {
		t.Fatalf("after the stopped release: %+v, %v; want trashed", b, err)
	}
	if list := g.ok(t, "list", "amber-fox"); !strings.Contains(list, "Thu 09:15") {
		t.Fatalf("the kept snapshot is gone after the stopped release:\n%s", list)
	}

	code, out, errw = box("release", "amber-fox", "--delete-kept")
	if code != cli.ExitOK {
		t.Fatalf("release --delete-kept: exit %d, %q %q", code, out, errw)
	}
	if _, err := sim.Guest(214); err == nil {
		t.Fatal("the guest outlived release --delete-kept")
	}
	if code, _, errw = box("release", "amber-fox", "--delete-kept", "--nonsense"); code != cli.ExitUsage {
		t.Fatalf("a bad flag: exit %d, %q", code, errw)
	}
}

// boxOK runs a box command that must succeed and answers what it printed.
func boxOK(t *testing.T, box func(args ...string) (int, string, string), args ...string) string {
	t.Helper()
	code, out, errw := box(args...)
	if code != cli.ExitOK {
		t.Fatalf("box %v: exit %d, %q %q", args, code, out, errw)
	}
	return out
}
