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

	telmate "github.com/Telmate/proxmox-api-go/proxmox"

	"github.com/boxsnap/boxsnap/providers"
)

// Backend is a Proxmox VE backend: the facade that answers the providers'
// interfaces. Its own methods are the steps that join its parts; the reads,
// a guest's life and the held copies' parts answer through the types they
// embed, which never reach back up to the Backend.
type Backend struct {
	*reader
	*lifecycle
	*heldCopies
	log *slog.Logger
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
	r := &reader{cfg: cfg, api: &api{c: c, poll: cfg.PollEvery, timeout: cfg.TaskTimeout}, stor: map[string]string{}}
	life := &lifecycle{reader: r}
	return &Backend{reader: r, lifecycle: life, heldCopies: &heldCopies{lifecycle: life},
		log: logger.With("backend", cfg.ID)}, nil
}

// ID is the backend's ID.
func (b *Backend) ID() string { return b.cfg.ID }

// String names the backend without its token.
func (b *Backend) String() string { return fmt.Sprintf("proxmox %s (%s)", b.cfg.ID, b.cfg.URL) }

// ZFSOrderOn reports whether ZFS restores are on (for live checks only).
func (b *Backend) ZFSOrderOn() bool { return b.cfg.ZFSOrderForLiveChecksOnly }
