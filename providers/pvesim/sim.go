package pvesim

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"sync"
	"time"
)

// Defaults of Config, chosen so that tests are quick and a person watching
// the demo still sees a task running for a moment.
const (
	// DefaultTaskDuration is how long a task runs on the simulator's clock
	// unless Config.TaskDuration or Config.TaskDurations says otherwise.
	DefaultTaskDuration = 150 * time.Millisecond
	// DefaultListenAddr is where `boxsnap pvesim` listens: Proxmox VE's own
	// port, on the loopback only.
	DefaultListenAddr = "127.0.0.1:8006"
	// ticketLifetime is how long a ticket from POST /access/ticket is valid
	// (AC AccessControl.pm: $ticket_lifetime = 3600*2).
	ticketLifetime = 2 * time.Hour
	// simulatorRelease is what GET /version answers as the release, so no
	// one mistakes the simulator for a Proxmox VE.
	simulatorRelease = "9.0-pvesim"
	// simulatorVersion is the Proxmox VE version the simulator follows; the
	// Telmate client parses it as major.minor.patch.
	simulatorVersion = "9.0.10"
	// serverHeader labels every response as the simulator's
	// (HS AnyEvent.pm sends "pve-api-daemon/3.0").
	serverHeader = "pve-api-daemon/3.0 (pvesim simulator)"
)

// Config configures a simulator. The zero value is usable: a running real
// clock, short tasks, no control API, no seed.
type Config struct {
	// Logger receives one line per request (method, path, status, caller
	// without secrets). Nil discards.
	Logger *slog.Logger
	// TaskDuration is how long every task takes on the simulator's clock.
	// Zero means DefaultTaskDuration; a negative value means tasks finish at
	// the next call that looks at the state (useful with clients that poll
	// slowly, such as the Telmate client's 2 s wait).
	TaskDuration time.Duration
	// TaskDurations overrides TaskDuration per task type ("vzsnapshot",
	// "qmclone", ...). A negative value means immediate, as above.
	TaskDurations map[string]time.Duration
	// StartTime, when not zero, freezes the simulator's clock at that time:
	// it then moves only by Advance and SetTime, so tests need no sleep.
	// When zero, the clock follows the real time (plus any Advance).
	StartTime time.Time
	// AuthFailDelay delays a 401, as Proxmox does (about 3 s; AC
	// AccessControl.pm and HS AnyEvent.pm). Zero means no delay.
	AuthFailDelay time.Duration
	// Control enables the control API under /pvesim/control/.
	Control bool
	// ControlSecret is the bearer secret of the control API. Empty means
	// one is generated at New (read it with ControlSecret).
	ControlSecret string
	// Seed makes generated MAC addresses and UUIDs repeatable. Zero means
	// a random seed.
	Seed uint64
	// Realistic makes snapshot and clone tasks take about as long as they
	// were measured to on Proxmox VE: a take 0.7 s (LXC) or 1.1 s (QEMU),
	// plus about 1 s per GiB of memory for a memory snapshot; a full clone
	// 9.3 s (LXC) or 6.5 s (QEMU) per 4 GiB used. TaskDurations still wins
	// for a type it names.
	Realistic bool
}

// Task times measured on Proxmox VE, and about 1 s per GiB of memory for a
// snapshot that holds it.
const (
	realisticTakeLXC        = 700 * time.Millisecond
	realisticTakeQEMU       = 1100 * time.Millisecond
	realisticMemoryPerGiB   = time.Second
	realisticCloneLXCPer4G  = 9300 * time.Millisecond
	realisticCloneQEMUPer4G = 6500 * time.Millisecond
)

// realistic moves a task's due time to what was measured on Proxmox VE, when
// Config.Realistic is on and no per-type duration overrides it.
func (s *Sim) realistic(t *task, d time.Duration) {
	if !s.cfg.Realistic || t.done || t.stalled {
		return
	}
	if _, ok := s.cfg.TaskDurations[t.typ]; ok {
		return
	}
	t.due = t.start.Add(d)
}

// Sim is a running (or ready) simulator of the Proxmox VE API. All methods
// are safe for concurrent use.
type Sim struct {
	cfg Config
	log *slog.Logger

	cert    tls.Certificate
	certDER []byte
	pool    *x509.CertPool

	mu       sync.Mutex
	clock    clockState
	rng      *mrand.Rand
	nodes    map[string]*node
	storages map[string]*storage // key: node + "/" + storage ID
	guests   map[int]*guest
	users    map[string]*principal // key: user@realm
	tokens   map[string]*principal // key: user@realm!tokenid
	pools    map[string]bool
	tickets  map[string]ticket
	csrf     map[string]string // ticket -> CSRF prevention token
	faults   []fault
	pending  []*task // tasks not yet done, so advancing needs no scan of all
	stalls   []fault // the next tasks that run until FinishTask (StallNextTask)
	calls    map[string]int
	nextPID  int

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
	s := &Sim{
		cfg:           cfg,
		log:           logger.With("component", "pvesim", "simulator", true),
		cert:          cert,
		certDER:       der,
		pool:          pool,
		clock:         newClockState(cfg.StartTime),
		rng:           mrand.New(mrand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		nodes:         map[string]*node{},
		storages:      map[string]*storage{},
		guests:        map[int]*guest{},
		users:         map[string]*principal{},
		tokens:        map[string]*principal{},
		pools:         map[string]bool{},
		tickets:       map[string]ticket{},
		csrf:          map[string]string{},
		calls:         map[string]int{},
		nextPID:       0x1a2b0,
		controlSecret: secret,
	}
	// root@pam exists on every Proxmox VE and has every privilege; its
	// password is unknown, so it cannot sign in here: it only owns the
	// tasks an admin runs outside (control API).
	s.users[rootUser] = &principal{id: rootUser, root: true}
	return s, nil
}

// Start listens on 127.0.0.1 on a free port and serves in the background
// until ctx ends or Close is called. It returns the base URL, without
// "/api2/json" (e.g. "https://127.0.0.1:41234").
func (s *Sim) Start(ctx context.Context) (string, error) {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("pvesim: listen: %w", err)
	}
	go func() {
		if err := s.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("pvesim: serve", "err", err)
		}
	}()
	go func() {
		<-ctx.Done()
		_ = s.Close()
	}()
	return "https://" + ln.Addr().String(), nil
}

// Serve serves the API over TLS on ln (a plain TCP listener) until Close.
// HTTP/2 is off: Proxmox's server speaks HTTP/1.1, and clients read its
// errors from the reason phrase, which HTTP/2 does not have.
func (s *Sim) Serve(ln net.Listener) error {
	srv := &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		TLSConfig: &tls.Config{
			Certificates: []tls.Certificate{s.cert},
			MinVersion:   tls.VersionTLS12,
			NextProtos:   []string{"http/1.1"},
		},
		TLSNextProto: map[string]func(*http.Server, *tls.Conn, http.Handler){},
		ErrorLog:     slog.NewLogLogger(s.log.Handler(), slog.LevelDebug),
	}
	s.srvMu.Lock()
	if s.closed {
		s.srvMu.Unlock()
		return http.ErrServerClosed
	}
	s.srv, s.ln = srv, ln
	s.srvMu.Unlock()
	s.log.Info("pvesim simulator serving", "addr", ln.Addr().String())
	return srv.ServeTLS(ln, "", "")
}

// Close stops the server, if it was started. The state stays readable.
func (s *Sim) Close() error {
	s.srvMu.Lock()
	defer s.srvMu.Unlock()
	s.closed = true
	if s.srv == nil {
		return nil
	}
	if err := s.srv.Close(); err != nil {
		return fmt.Errorf("pvesim: close: %w", err)
	}
	return nil
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

// Calls returns how many API requests were served, per method and route
// pattern (e.g. "GET /nodes/{node}/{type}/{vmid}/snapshot"), so a benchmark
// can count the calls a sweep makes. Unknown paths count under "METHOD ?".
func (s *Sim) Calls() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int, len(s.calls))
	for k, v := range s.calls {
		out[k] = v
	}
	return out
}

// ResetCalls sets every counter of Calls back to zero.
func (s *Sim) ResetCalls() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = map[string]int{}
}

func randomHex(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("random: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// taskDuration is how long a task of type typ runs.
func (s *Sim) taskDuration(typ string) time.Duration {
	if d, ok := s.cfg.TaskDurations[typ]; ok {
		return max(d, 0)
	}
	switch {
	case s.cfg.TaskDuration < 0:
		return 0
	case s.cfg.TaskDuration == 0:
		return DefaultTaskDuration
	}
	return s.cfg.TaskDuration
}
