package proxmox

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	telmate "github.com/Telmate/proxmox-api-go/proxmox"

	"github.com/boxsnap/boxsnap/providers"
)

// Defaults of Config.
const (
	// DefaultPollEvery is how often a task's status is read while boxsnap
	// waits for it: Proxmox finishes an LXC snapshot in about 0.7 s, which
	// the client's own 2 s wait would round up to 2 s.
	DefaultPollEvery = 150 * time.Millisecond
	// DefaultTaskTimeout bounds one wait for one task.
	DefaultTaskTimeout = 30 * time.Minute
	// DefaultRequestTimeout bounds one HTTP request.
	DefaultRequestTimeout = 30 * time.Second
	// DefaultVMIDFirst and DefaultVMIDLast are boxsnap's range of VMIDs for
	// the guests it makes (clones, held copies).
	DefaultVMIDFirst = 9000
	DefaultVMIDLast  = 9999
)

// Config configures a Proxmox backend. The token's secret comes from the
// environment or a file, never from settings stored in the database.
type Config struct {
	// ID is the backend's ID in settings, such as "pve-lab".
	ID string
	// URL is the API's base, "https://pve.example:8006" (with or without
	// "/api2/json"). It must be https.
	URL string
	// TokenID is "user@realm!tokenid"; TokenSecret its secret.
	TokenID     string
	TokenSecret string
	// CAFile is a PEM file of the certificate(s) to trust; empty means the
	// system's roots. CAPool, when set, is used instead (tests).
	CAFile string
	CAPool *x509.CertPool
	// InsecureSkipTLSVerify turns certificate verification off. Never the
	// default; only a setting of that name turns it on.
	InsecureSkipTLSVerify bool
	// Install is this install's ID, written on every label.
	Install string
	// Pool is the Proxmox pool boxsnap's guests go in; empty for none.
	Pool string
	// VMIDFirst and VMIDLast bound the VMIDs boxsnap gives the guests it
	// makes; zero means DefaultVMIDFirst and DefaultVMIDLast.
	VMIDFirst, VMIDLast int
	// PollEvery is how often a task's status is read; zero means
	// DefaultPollEvery.
	PollEvery time.Duration
	// TaskTimeout bounds one wait for one task; zero means
	// DefaultTaskTimeout.
	TaskTimeout time.Duration
	// ZFSOrderForLiveChecksOnly turns on ZFS restores (stop, held copy of the
	// stopped guest, rollback to the newest, start). Off by default: ZFS
	// restores ship off until a live check on a ZFS node shows the restore,
	// its held-copy undo and the swap back leave every guest and snapshot
	// accounted for; it exists for live checks only.
	ZFSOrderForLiveChecksOnly bool
	// Logger; nil discards.
	Logger *slog.Logger
}

// Backend is a Proxmox VE backend.
type Backend struct {
	cfg  Config
	api  *api
	log  *slog.Logger
	mu   sync.Mutex
	stor map[string]string // node/storage → type, read once per storage
}

var (
	_ providers.Backend    = (*Backend)(nil)
	_ providers.Boxes      = (*Backend)(nil)
	_ providers.HeldCopier = (*Backend)(nil)
	_ providers.TaskLister = (*Backend)(nil)
	_ providers.Labeler    = (*Backend)(nil)
)

// New makes a backend. It checks the configuration and makes the client; it
// calls no host.
func New(cfg Config) (*Backend, error) {
	if cfg.ID == "" {
		return nil, errors.New("proxmox: a backend ID is required")
	}
	if !strings.HasPrefix(cfg.URL, "https://") {
		return nil, fmt.Errorf("proxmox %s: the URL must be https://", cfg.ID)
	}
	if cfg.TokenID == "" || cfg.TokenSecret == "" || !strings.Contains(cfg.TokenID, "!") {
		return nil, fmt.Errorf("proxmox %s: an API token (user@realm!tokenid and its secret) is required", cfg.ID)
	}
	if cfg.Install == "" {
		return nil, fmt.Errorf("proxmox %s: the install ID is required for labels", cfg.ID)
	}
	tc := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: cfg.InsecureSkipTLSVerify} //nolint:gosec // only by the setting's name
	switch {
	case cfg.CAPool != nil:
		tc.RootCAs = cfg.CAPool
	case cfg.CAFile != "":
		pem, err := os.ReadFile(cfg.CAFile)
		if err != nil {
			return nil, fmt.Errorf("proxmox %s: read the CA file: %w", cfg.ID, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("proxmox %s: the CA file %s holds no PEM certificate", cfg.ID, cfg.CAFile)
		}
		tc.RootCAs = pool
	}
	if cfg.PollEvery <= 0 {
		cfg.PollEvery = DefaultPollEvery
	}
	if cfg.TaskTimeout <= 0 {
		cfg.TaskTimeout = DefaultTaskTimeout
	}
	if cfg.VMIDFirst == 0 {
		cfg.VMIDFirst = DefaultVMIDFirst
	}
	if cfg.VMIDLast == 0 {
		cfg.VMIDLast = DefaultVMIDLast
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	base := strings.TrimSuffix(strings.TrimSuffix(cfg.URL, "/"), "/api2/json") + "/api2/json"
	hc := &http.Client{Timeout: DefaultRequestTimeout, Transport: &http.Transport{TLSClientConfig: tc, ForceAttemptHTTP2: false,
		MaxIdleConnsPerHost: 16}}
	c, err := telmate.NewClient(base, hc, "", tc, "", int(cfg.TaskTimeout.Seconds()))
	if err != nil {
		return nil, fmt.Errorf("proxmox %s: client: %w", cfg.ID, err)
	}
	c.SetAPIToken(cfg.TokenID, cfg.TokenSecret)
	return &Backend{cfg: cfg, api: &api{c: c, poll: cfg.PollEvery, timeout: cfg.TaskTimeout},
		log: logger.With("backend", cfg.ID), stor: map[string]string{}}, nil
}

// ID is the backend's ID.
func (b *Backend) ID() string { return b.cfg.ID }

// String names the backend without its token.
func (b *Backend) String() string { return fmt.Sprintf("proxmox %s (%s)", b.cfg.ID, b.cfg.URL) }

// ZFSOrderOn reports whether ZFS restores are on (for live checks only).
func (b *Backend) ZFSOrderOn() bool { return b.cfg.ZFSOrderForLiveChecksOnly }

// guestType is Proxmox's type for a kind of box.
func guestType(kind string) string {
	if kind == KindLXC {
		return "lxc"
	}
	return "qemu"
}

// Kinds of box this backend runs.
const (
	KindLXC         = "lxc"
	KindQEMU        = "qemu"
	KindQEMUWindows = "qemu-windows"
)

func guestPath(g providers.Guest) string {
	return fmt.Sprintf("/nodes/%s/%s/%s", g.Host, guestType(g.Kind), g.Ref)
}

// unlockWords is the host's command that clears a guest's lock: a lock is the
// host's to clear, never boxsnap's.
func unlockWords(g providers.Guest) string {
	tool := "qm"
	if g.Kind == KindLXC {
		tool = "pct"
	}
	return fmt.Sprintf("Run %s unlock %s on %s", tool, g.Ref, g.Host)
}
