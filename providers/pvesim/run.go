package pvesim

import (
	"context"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"
)

// Demo names, used by SeedDemo and by `boxsnap pvesim`.
const (
	// DemoTokenID is the API token SeedDemo makes for boxsnap.
	DemoTokenID = "boxsnap@pve!boxsnap"
	// DemoPool is the pool that holds boxsnap's guests in the demo.
	DemoPool = "boxsnap"
	// demoStorageSize is each demo storage's size.
	demoStorageSize = 500 * gib
)

// SeedDemo seeds the demo cluster: node pve-1 with LVM-thin storage
// "local-lvm" and node pve-2 with ZFS storage "local-zfs", a few LXC and
// QEMU guests (one of them Windows) in pool "boxsnap", the Linux ones made
// from an image with the identity reset (tag boxsnap-reset-1), so their
// snapshots fork and keep, and the API token
// DemoTokenID with the given secret and the rights boxsnap needs:
// PVEVMAdmin on /pool/boxsnap and /vms, PVEDatastoreUser on /storage,
// Sys.Audit on /nodes (to read others' tasks, for outside restores).
func (s *Sim) SeedDemo(tokenSecret string) error {
	steps := []func() error{
		func() error { return s.AddNode("pve-1") },
		func() error { return s.AddNode("pve-2") },
		func() error {
			return s.AddStorage("pve-1", StorageSpec{ID: "local-lvm", Type: StorageLVMThin, Total: demoStorageSize})
		},
		func() error {
			return s.AddStorage("pve-2", StorageSpec{ID: "local-zfs", Type: StorageZFSPool, Total: demoStorageSize})
		},
	}
	guests := []GuestSpec{
		{VMID: 214, Type: LXC, Node: "pve-1", Name: "amber-fox", Storage: "local-lvm", DiskSize: 8 * gib, Memory: 2048, Cores: 2, OnBoot: true, Running: true, Pool: DemoPool, Written: 3 * gib, Tags: "boxsnap;boxsnap-reset-1"},
		{VMID: 215, Type: QEMU, Node: "pve-1", Name: "quiet-owl", Storage: "local-lvm", DiskSize: 32 * gib, Memory: 4096, Cores: 4, OnBoot: true, Running: true, Pool: DemoPool, Written: 9 * gib, Tags: "boxsnap;boxsnap-reset-1"},
		{VMID: 216, Type: QEMU, Node: "pve-1", Name: "win-desk", Storage: "local-lvm", DiskSize: 64 * gib, Memory: 8192, Cores: 4, OSType: "win11", Pool: DemoPool, Written: 21 * gib, Tags: "boxsnap;windows"},
		{VMID: 221, Type: LXC, Node: "pve-2", Name: "river-elk", Storage: "local-zfs", DiskSize: 8 * gib, Memory: 1024, Cores: 1, OnBoot: true, Running: true, Pool: DemoPool, Written: 2 * gib, Tags: "boxsnap;boxsnap-reset-1"},
		{VMID: 222, Type: QEMU, Node: "pve-2", Name: "stone-bay", Storage: "local-zfs", DiskSize: 32 * gib, Memory: 4096, Cores: 2, Pool: DemoPool, Written: 7 * gib, Tags: "boxsnap;boxsnap-reset-1"},
	}
	for _, g := range guests {
		steps = append(steps, func() error { return s.AddGuest(g) })
	}
	steps = append(steps, func() error {
		return s.AddToken(DemoTokenID, tokenSecret,
			Grant{Path: "/pool/" + DemoPool, Privs: []string{"PVEVMAdmin"}, Propagate: true},
			Grant{Path: "/vms", Privs: []string{"PVEVMAdmin"}, Propagate: true},
			Grant{Path: "/storage", Privs: []string{"PVEDatastoreUser"}, Propagate: true},
			Grant{Path: "/nodes", Privs: []string{"Sys.Audit"}, Propagate: true},
		)
	})
	for _, step := range steps {
		if err := step(); err != nil {
			return fmt.Errorf("pvesim: seed demo: %w", err)
		}
	}
	return nil
}

// Run is the `boxsnap pvesim` subcommand: it serves the simulator, seeded
// with the demo cluster, until ctx ends. It writes the demo API token to
// -token-file and the CA certificate to -ca-file (both mode 0600), and
// prints only their paths, never the secret.
func Run(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("pvesim", flag.ContinueOnError)
	fs.SetOutput(stdout)
	listen := fs.String("listen", DefaultListenAddr, "address to serve HTTPS on")
	demo := fs.Bool("demo", true, "seed the demo cluster (pve-1 LVM-thin, pve-2 ZFS, a few guests)")
	tokenFile := fs.String("token-file", "pvesim-token.env", "file to write the demo API token to (mode 0600)")
	caFile := fs.String("ca-file", "pvesim-ca.pem", "file to write the simulator's certificate to, for clients to trust")
	control := fs.Bool("control", false, "enable the control API (faults, clock) under /pvesim/control/")
	controlFile := fs.String("control-file", "pvesim-control.secret", "file to write the control API's secret to (mode 0600)")
	taskDuration := fs.Duration("task-duration", time.Second, "how long each task runs (so a person sees it running)")
	realistic := fs.Bool("realistic", true, "snapshot and clone tasks take as long as measured on Proxmox VE")
	authDelay := fs.Duration("auth-fail-delay", 3*time.Second, "delay of a 401, as Proxmox VE's")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("pvesim: flags: %w", err)
	}
	logger := slog.New(slog.NewTextHandler(stdout, &slog.HandlerOptions{Level: slog.LevelInfo}))
	sim, err := New(Config{Logger: logger, TaskDuration: *taskDuration, AuthFailDelay: *authDelay, Control: *control, Realistic: *realistic})
	if err != nil {
		return err
	}
	url := "https://" + *listen + apiPrefix
	if *demo {
		secret, err := randomUUID()
		if err != nil {
			return fmt.Errorf("pvesim: token secret: %w", err)
		}
		if err := sim.SeedDemo(secret); err != nil {
			return err
		}
		content := fmt.Sprintf("# pvesim simulator of the Proxmox VE API: demo token\nPVE_URL=%s\nPVE_TOKEN_ID=%s\nPVE_TOKEN_SECRET=%s\nPVE_CA_FILE=%s\n", url, DemoTokenID, secret, *caFile)
		if err := writePrivate(*tokenFile, []byte(content)); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "pvesim: demo API token written to %s\n", *tokenFile)
	}
	if err := writePrivate(*caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: sim.Certificate()})); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "pvesim: certificate written to %s\n", *caFile)
	if *control {
		if err := writePrivate(*controlFile, []byte(sim.ControlSecret()+"\n")); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "pvesim: control API secret written to %s\n", *controlFile)
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", *listen)
	if err != nil {
		return fmt.Errorf("pvesim: listen on %s: %w", *listen, err)
	}
	fmt.Fprintf(stdout, "pvesim: simulator of the Proxmox VE API (not a Proxmox VE) serving %s\n", url)
	done := make(chan error, 1)
	go func() { done <- sim.Serve(ln) }()
	select {
	case <-ctx.Done():
		_ = sim.Close()
		<-done
		return nil
	case err := <-done:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return fmt.Errorf("pvesim: serve: %w", err)
	}
}

// writePrivate writes a file only its owner can read, replacing one that is
// there.
func writePrivate(path string, b []byte) error {
	if err := os.WriteFile(path, b, 0o600); err != nil {
		return fmt.Errorf("pvesim: write %s: %w", path, err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		return fmt.Errorf("pvesim: chmod %s: %w", path, err)
	}
	return nil
}

func randomUUID() (string, error) {
	h, err := randomHex(16)
	if err != nil {
		return "", err
	}
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32], nil
}
