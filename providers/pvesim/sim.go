package pvesim

import (
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
)

// Sim is a running (or ready) simulator of the Proxmox VE API: the holder
// of its surfaces (the HTTP API's route table and dispatch, the control
// API and its Go methods, the server). The simulated cluster's state, who
// may do what, and the workers its tasks run are parts of their own, which
// Sim embeds and which never reach back up to it. All methods are safe for
// concurrent use.
type Sim struct {
	*cluster
	*access
	*workers

	cert    tls.Certificate
	certDER []byte
	pool    *x509.CertPool

	controlSecret string

	srvMu  sync.Mutex
	srv    *http.Server
	ln     net.Listener
	closed bool
}

// New makes a simulator with no nodes, storages, guests or tokens, and a
// fresh self-signed certificate. Seed it with AddNode, AddStorage, AddGuest,
// AddUser and AddToken (or SeedDemo), then Start or Serve it.
func New(cfg Config) (*Sim, error) {
	cert, der, pool, err := makeCertificate()
	if err != nil {
		return nil, fmt.Errorf("pvesim: make certificate: %w", err)
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	seed := cfg.Seed
	if seed == 0 {
		var b [8]byte
		if _, err := rand.Read(b[:]); err != nil {
			return nil, fmt.Errorf("pvesim: seed: %w", err)
		}
		for _, x := range b {
			seed = seed<<8 | uint64(x)
		}
	}
	secret := cfg.ControlSecret
	if cfg.Control && secret == "" {
		secret, err = randomHex(24)
		if err != nil {
			return nil, fmt.Errorf("pvesim: control secret: %w", err)
		}
	}
	c := newCluster(cfg, logger.With("component", "pvesim", "simulator", true), seed)
	return &Sim{
		cluster:       c,
		access:        &access{cluster: c},
		workers:       &workers{cluster: c},
		cert:          cert,
		certDER:       der,
		pool:          pool,
		controlSecret: secret,
	}, nil
}

// Certificate returns the DER bytes of the simulator's self-signed
// certificate (ECDSA P-256, for 127.0.0.1, ::1 and localhost).
func (s *Sim) Certificate() []byte { return append([]byte(nil), s.certDER...) }

// CertPool returns a pool holding only the simulator's certificate.
func (s *Sim) CertPool() *x509.CertPool { return s.pool.Clone() }

// TLSConfig returns a client configuration that trusts the simulator's
// certificate and nothing else, with verification on.
func (s *Sim) TLSConfig() *tls.Config {
	return &tls.Config{RootCAs: s.pool.Clone(), MinVersion: tls.VersionTLS12}
}

// ControlSecret returns the control API's bearer secret ("" when the control
// API is off). Never log it.
func (s *Sim) ControlSecret() string { return s.controlSecret }

func randomHex(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("random: %w", err)
	}
	return hex.EncodeToString(b), nil
}
