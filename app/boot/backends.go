package boot

import (
	"context"
	"crypto/rand"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/boxsnap/boxsnap/app/config"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/providers/docker"
	"github.com/boxsnap/boxsnap/providers/local"
	"github.com/boxsnap/boxsnap/providers/local/ship"
	"github.com/boxsnap/boxsnap/providers/proxmox"
	"github.com/boxsnap/boxsnap/providers/pvesim"
)

// LocalBackendID is the local backend's ID in settings.
const LocalBackendID = "local"

// DemoProxmoxID is the simulated Proxmox backend's ID in the demo.
const DemoProxmoxID = "pve-demo"

// demoTaskDuration is how long each simulated task runs in the demo, so a
// person sees a take or a restore run for a moment.
const demoTaskDuration = 400 * time.Millisecond

// backends makes the configured backends: the local backend always, in the
// folder the configuration names; a Proxmox VE backend when
// BOXSNAP_PROXMOX_URL is set; and with cfg.Demo a simulated Proxmox VE
// (pvesim, in this process) labelled as simulated; a Docker Engine backend
// when BOXSNAP_DOCKER_HOST is set, or with cfg.Demo where a local engine
// answers; a QEMU backend when BOXSNAP_QEMU_SOCKET is set, or with cfg.Demo
// where this host's libvirtd answers and the tests' guest is built (qemu.go).
//
// remote, when not nil, is the local backend's content store, and mayFetch
// what it asks before it fetches a snapshot this host does not hold.
func backends(cfg config.Config, install string, logger *slog.Logger, remote *ship.Remote, mayFetch func(context.Context, string) error) ([]snapshots.Backend, error) {
	lb, err := local.New(local.Config{ID: LocalBackendID, Root: cfg.LocalRoot, Host: cfg.Host, Install: install, Templates: filepath.Join(cfg.DataDir, "templates"), DiskImages: cfg.LocalDiskImages, Logger: logger.With("backend", LocalBackendID),
		ContentStore: remote, ContentCacheBytes: cfg.ContentCacheBytes, ContentCachePercent: cfg.ContentCachePercent, MayFetch: mayFetch})
	if err != nil {
		return nil, fmt.Errorf("local backend: %w", err)
	}
	out := []snapshots.Backend{{ID: LocalBackendID, Kind: "local", Label: "this host", Snap: lb, Boxes: lb}}
	if cfg.ProxmoxURL != "" {
		be, err := proxmoxBackend(cfg, install, logger)
		if err != nil {
			return nil, err
		}
		out = append(out, snapshots.Backend{ID: cfg.ProxmoxID, Kind: "proxmox", Label: "Proxmox VE " + cfg.ProxmoxID, Snap: be, Boxes: be})
	}
	if cfg.Demo {
		be, _, err := DemoProxmox(context.Background(), install, logger)
		if err != nil {
			return nil, fmt.Errorf("demo Proxmox: %w", err)
		}
		out = append(out, be)
	}
	if be, err := dockerBackend(cfg, install, logger); err != nil {
		return nil, err
	} else if be != nil {
		out = append(out, snapshots.Backend{ID: be.ID(), Kind: "docker", Label: dockerLabel(cfg), Snap: be, Boxes: be})
	}
	if be, err := qemuBackend(cfg, install, logger); err != nil {
		return nil, err
	} else if be != nil {
		out = append(out, snapshots.Backend{ID: be.ID(), Kind: "qemu", Label: qemuLabel, Note: qemuNote(be, logger), Snap: be, Boxes: be})
	} else if be := demoQEMU(cfg, install, logger); be != nil {
		out = append(out, snapshots.Backend{ID: be.ID(), Kind: "qemu", Label: qemuLabel, Note: qemuNote(be, logger), Snap: be, Boxes: be})
	}
	return out, nil
}

// LocalDockerHost is the local engine's socket the demo looks for.
const LocalDockerHost = "unix:///var/run/docker.sock"

// dockerBackend makes the Docker backend BOXSNAP_DOCKER_HOST names; with the
// demo and no host named, the local engine when it answers (nothing fails
// where none does: the Settings page says how to add one).
func dockerBackend(cfg config.Config, install string, logger *slog.Logger) (*docker.Backend, error) {
	host := cfg.DockerHost
	if host == "" && !cfg.Demo {
		return nil, nil
	}
	if host == "" {
		host = LocalDockerHost
	}
	be, err := docker.New(docker.Config{ID: cfg.DockerID, Host: host, TLSCACert: cfg.DockerTLSCA, TLSCert: cfg.DockerTLSCert, TLSKey: cfg.DockerTLSKey,
		Install: install, Network: cfg.DockerNetwork, BoxesGoWithHost: cfg.DockerBoxesGoWithHost, StateDir: filepath.Join(cfg.DataDir, "docker", cfg.DockerID),
		Logger: logger})
	if err != nil {
		return nil, fmt.Errorf("docker backend: %w", err)
	}
	if cfg.DockerHost == "" {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if err := be.Ping(ctx); err != nil {
			_ = be.Close()
			logger.Info("demo: no Docker engine answers here, so no Docker backend (Settings says how to add one)", "looked_at", host)
			return nil, nil
		}
	}
	return be, nil
}

func dockerLabel(cfg config.Config) string {
	if cfg.DockerHost == "" {
		return "Docker (this host)"
	}
	return "Docker " + cfg.DockerID
}

// proxmoxBackend makes the Proxmox backend the configuration names.
func proxmoxBackend(cfg config.Config, install string, logger *slog.Logger) (*proxmox.Backend, error) {
	be, err := proxmox.New(proxmox.Config{ID: cfg.ProxmoxID, URL: cfg.ProxmoxURL, TokenID: cfg.ProxmoxTokenID, TokenSecret: cfg.ProxmoxTokenSecret,
		CAFile: cfg.ProxmoxCAFile, InsecureSkipTLSVerify: cfg.ProxmoxInsecureSkipTLSVerify, Pool: cfg.ProxmoxPool, Install: install,
		ZFSOrderForLiveChecksOnly: cfg.ProxmoxZFSOrderLiveChecksOnly, Logger: logger})
	if err != nil {
		return nil, fmt.Errorf("proxmox backend: %w", err)
	}
	if cfg.ProxmoxInsecureSkipTLSVerify {
		logger.Warn("the Proxmox API's certificate is not verified: BOXSNAP_PROXMOX_INSECURE_SKIP_TLS_VERIFY is set", "backend", cfg.ProxmoxID)
	}
	return be, nil
}

// DemoProxmox starts an in-process simulator of a Proxmox VE, seeded with
// pvesim's demo cluster (pve-1 with LVM-thin, pve-2 with ZFS, a few LXC and
// QEMU guests), and returns a Proxmox backend on it labelled
// "Proxmox VE (simulated)", with Simulated set. The simulator stops when ctx
// ends. Its token's secret is made here and never leaves the process.
func DemoProxmox(ctx context.Context, install string, logger *slog.Logger) (snapshots.Backend, *pvesim.Sim, error) {
	sim, err := pvesim.New(pvesim.Config{Logger: logger.With("component", "pvesim"), TaskDuration: demoTaskDuration})
	if err != nil {
		return snapshots.Backend{}, nil, err
	}
	secret := newSecret()
	if err := sim.SeedDemo(secret); err != nil {
		return snapshots.Backend{}, nil, err
	}
	url, err := sim.Start(ctx)
	if err != nil {
		return snapshots.Backend{}, nil, err
	}
	// The demo turns the live-checks switch on for its simulated ZFS node
	// only, so a newcomer can restore pve-2's boxes and undo that restore (a
	// swap); a real Proxmox VE keeps ZFS restores off until a live check on a
	// ZFS node has shown them safe.
	be, err := proxmox.New(proxmox.Config{ID: DemoProxmoxID, URL: url, TokenID: pvesim.DemoTokenID, TokenSecret: secret,
		CAPool: sim.CertPool(), Pool: pvesim.DemoPool, Install: install, Logger: logger, ZFSOrderForLiveChecksOnly: true})
	if err != nil {
		_ = sim.Close()
		return snapshots.Backend{}, nil, err
	}
	logger.Info("demo: ZFS restores and their undo are on for the simulated Proxmox VE only (the live-checks switch)", "backend", DemoProxmoxID)
	return snapshots.Backend{ID: DemoProxmoxID, Kind: "proxmox", Label: "Proxmox VE (simulated)", Simulated: true, Snap: be, Boxes: be}, sim, nil
}

// newSecret makes a random API token secret in Proxmox's UUID form.
func newSecret() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
