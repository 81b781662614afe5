package docker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/client"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/docker/boxfiles"
	"github.com/boxsnap/boxsnap/providers/docker/hoststate"
	"github.com/boxsnap/boxsnap/providers/docker/moves"
)

// KindLinux is the kind of box this backend runs: a Linux container.
const KindLinux = "linux"

// Defaults of Config.
const (
	// DefaultVolumePath is where a box's own Docker volume is mounted in its
	// container: the box keeps its own Docker data there, so its images
	// survive a snapshot and a restore.
	DefaultVolumePath = "/var/lib/docker"
	// DefaultStopSeconds is how long a stop waits for the box's processes
	// before it kills them.
	DefaultStopSeconds = 10
	// DefaultMemoryBytes, DefaultProcesses and DefaultOpenFiles bound a box
	// whose template gives no bound (never none).
	DefaultMemoryBytes = 2 << 30
	DefaultProcesses   = 1024
	DefaultOpenFiles   = 4096
	// DefaultRequestTimeout bounds a call that is not a copy or a commit.
	DefaultRequestTimeout = 30 * time.Second
)

// Names and labels boxsnap writes on the daemon: IDs only, since anyone with
// the daemon reads them.
const (
	labelInstall    = "boxsnap.install"
	labelBox        = "boxsnap.box"
	labelSnapshot   = "boxsnap.snapshot"
	labelRole       = "boxsnap.role"
	labelVolume     = "boxsnap.volume"
	labelReset      = "boxsnap.reset-version"
	labelTakenAt    = "boxsnap.taken-at"
	labelFromBox    = "boxsnap.parent"
	roleBox         = "box"
	roleSnapshot    = "snapshot"
	roleCopier      = "copier"
	roleLook        = "look" // the container a look inside a snapshot reads (boxfiles)
	snapshotRepo    = "boxsnap/snapshot"
	keptRepo        = "boxsnap/kept"
	identityEnvName = "BOXSNAP_IDENTITY"
)

// labelVolumeIn, on a snapshot's image, names the folder of the image that
// holds the box's volume as it was (the box's VolumePath): the volume is a
// part of the image, its changes since the parent's take a layer of their
// own. Empty or absent, the snapshot's volume is its copy boxsnap-<ID>.
const labelVolumeIn = "boxsnap.volume-in"

// Config configures a Docker backend.
type Config struct {
	// ID is the backend's ID in settings, such as "docker".
	ID string
	// Host is the engine's address: unix:///var/run/docker.sock,
	// tcp://host:2376 (with TLS) or ssh://user@host. Empty means the
	// environment's DOCKER_HOST, or the local socket.
	Host string
	// TLSCACert, TLSCert and TLSKey are the PEM files of a tcp:// engine's
	// TLS (docker's --tlsverify); all three, or none.
	TLSCACert, TLSCert, TLSKey string
	// Install is this install's ID, written on every label.
	Install string
	// VolumePath is where the box's volume is mounted; DefaultVolumePath
	// when empty.
	VolumePath string
	// Network is the network boxes join ("none" for none); empty is the
	// engine's default.
	Network string
	// BoxesGoWithHost is the profile of hosts whose boxes go with their host
	// (as on Hetzner and Namespace): Keep is off there.
	BoxesGoWithHost bool
	// SSHCommand is the ssh client an ssh:// host is reached with; "ssh"
	// when empty.
	SSHCommand string
	// CopierBinary is the static busybox that the copier image is made from
	// (the volume's copy runs in a container of it); "/bin/busybox" when
	// empty.
	CopierBinary string
	// StateDir is the folder where the backend keeps the record of each
	// box's last take, so that the first take after a restart writes only
	// what changed; empty keeps the records in memory only.
	StateDir string
	// Hook, when set, is called at each named point of a take and a restore
	// (tests stop a worker there); it never changes what happens.
	Hook func(point string)
	// Logger; nil discards.
	Logger *slog.Logger
}

// Backend is a Docker Engine backend: a box is a container with its own
// named volume; a snapshot is a committed image and a copy of that volume.
// It answers the providers' interfaces through its parts: the engine's
// client (containers.go), the snapshots the engine stores (snapshots.go)
// and the box's files, read through look containers and written through
// the archive endpoint (package boxfiles); the boxes, the take, the
// restore, the reset and the fork are its own.
type Backend struct {
	*engine
	stored // the snapshots' images and volume copies (snapshots.go)
	// Files answers the Browser's methods, through its look containers,
	// and writes boxsnap's files into a box (package boxfiles).
	*boxfiles.Files
	// Moves answers the exports, imports and share copies (moveengine.go).
	*moves.Moves

	mu     sync.Mutex
	copier string // the copier image's ID once made

	// records holds each box's record of its last take (takerecords.go).
	records takeRecords
}

// engine is the backend's client of the Docker Engine and its
// configuration, which every part of the backend calls the engine through.
// It is declared here, its container and volume calls in containers.go.
type engine struct {
	cfg Config
	c   *client.Client
	log *slog.Logger
}

// stored is what the engine holds of the snapshots: their images, volume
// copies and keep dates. It is declared here, its methods in snapshots.go.
type stored struct{ *engine }

var (
	_ providers.Backend = (*Backend)(nil)
	_ providers.Boxes   = (*Backend)(nil)
	_ providers.Labeler = (*Backend)(nil)
	_ providers.OneHost = (*Backend)(nil)
)

// OneHost reports whether the engine is this host's own, on a unix socket:
// its containers and images are then this host's (providers.OneHost). An
// engine over tcp:// or ssh:// every host may reach alike.
func (b *Backend) OneHost() bool {
	u, err := url.Parse(b.where())
	return err == nil && (u.Scheme == "unix" || u.Scheme == "")
}

// New makes a backend. It checks the configuration and makes the client,
// and sweeps from the state folder what takes cut short left there; it
// calls no host. The API version is negotiated with the engine on the first
// call, never fixed.
func New(cfg Config) (*Backend, error) {
	if cfg.ID == "" {
		return nil, errors.New("docker: a backend ID is required")
	}
	if cfg.Install == "" {
		return nil, fmt.Errorf("docker %s: the install ID is required for labels", cfg.ID)
	}
	if cfg.VolumePath == "" {
		cfg.VolumePath = DefaultVolumePath
	}
	if cfg.CopierBinary == "" {
		cfg.CopierBinary = "/bin/busybox"
	}
	opts := []client.Opt{client.WithAPIVersionNegotiation()}
	host := cfg.Host
	switch {
	case host == "":
		opts = append(opts, client.FromEnv)
	case strings.HasPrefix(host, "ssh://"):
		if cfg.SSHCommand == "" {
			cfg.SSHCommand = "ssh"
		}
		dial, err := sshDialer(host, cfg.SSHCommand)
		if err != nil {
			return nil, fmt.Errorf("docker %s: %w", cfg.ID, err)
		}
		opts = append(opts, client.WithHost("http://docker.example"), client.WithDialContext(dial))
	case strings.HasPrefix(host, "unix://"), strings.HasPrefix(host, "tcp://"):
		opts = append(opts, client.WithHost(host))
		if n := countSet(cfg.TLSCACert, cfg.TLSCert, cfg.TLSKey); n == 3 {
			opts = append(opts, client.WithTLSClientConfig(cfg.TLSCACert, cfg.TLSCert, cfg.TLSKey))
		} else if n != 0 {
			return nil, fmt.Errorf("docker %s: TLS needs the CA, the certificate and the key: %d of 3 are set", cfg.ID, n)
		} else if strings.HasPrefix(host, "tcp://") {
			return nil, fmt.Errorf("docker %s: a tcp:// engine needs TLS (its CA, certificate and key): an engine's API without TLS is root on its host for anyone on the network", cfg.ID)
		}
	default:
		return nil, fmt.Errorf("docker %s: the host %q is none of unix://, tcp:// and ssh://", cfg.ID, host)
	}
	c, err := client.New(opts...)
	if err != nil {
		return nil, fmt.Errorf("docker %s: client: %w", cfg.ID, err)
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	e := &engine{cfg: cfg, c: c, log: logger.With("backend", cfg.ID)}
	b := &Backend{engine: e, stored: stored{e}, Files: &boxfiles.Files{E: filesEngine{e}}}
	b.Moves = &moves.Moves{E: moveEngine{b}}
	e.state().SweepAtStart()
	return b, nil
}

func countSet(s ...string) int {
	n := 0
	for _, x := range s {
		if x != "" {
			n++
		}
	}
	return n
}

// Close closes the client's connections.
func (e *engine) Close() error { return e.c.Close() }

// ID is the backend's ID.
func (e *engine) ID() string { return e.cfg.ID }

// String names the backend.
func (e *engine) String() string { return fmt.Sprintf("docker %s (%s)", e.cfg.ID, e.where()) }

// Ping asks the engine whether it answers, negotiating the API version.
func (e *engine) Ping(ctx context.Context) error {
	cctx, cancel := short(ctx)
	defer cancel()
	_, err := e.c.Ping(cctx, client.PingOptions{NegotiateAPIVersion: true})
	return wrap(err, "ping the Docker engine")
}

// Client is the backend's engine client (the doctor and the tests read the
// engine with it).
func (e *engine) Client() *client.Client { return e.c }

// state is the backend's state folder on this host (package hoststate).
func (e *engine) state() hoststate.State { return hoststate.State{Dir: e.cfg.StateDir, Log: e.log} }

func (e *engine) hook(point string) {
	if e.cfg.Hook != nil {
		e.cfg.Hook(point)
	}
}

// Container names: the box's own, and the two a swap uses for a moment.
func boxName(box string) string     { return "boxsnap-" + box }
func nextName(ref string) string    { return ref + "-next" }
func prevName(ref string) string    { return ref + "-prev" }
func snapImage(snap string) string  { return snapshotRepo + ":" + snap }
func snapVolume(snap string) string { return "boxsnap-" + snap }

// wrap gives an engine error boxsnap's meaning: a daemon that does not
// answer is ErrUnreachable, an absent object ErrNotFound.
func wrap(err error, what string) error {
	if err == nil {
		return nil
	}
	switch {
	case client.IsErrConnectionFailed(err), errors.Is(err, http.ErrServerClosed), isDialError(err):
		return fmt.Errorf("%s: the Docker engine does not answer: %w (%w)", what, providers.ErrUnreachable, err)
	case cerrdefs.IsNotFound(err):
		return fmt.Errorf("%s: %w (%w)", what, providers.ErrNotFound, err)
	}
	return fmt.Errorf("%s: %w", what, err)
}

func isDialError(err error) bool {
	s := err.Error()
	return strings.Contains(s, "connect: connection refused") || strings.Contains(s, "connect: no such file or directory") ||
		strings.Contains(s, "Cannot connect to the Docker daemon")
}

// short bounds a call that is not a copy or a commit.
func short(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, DefaultRequestTimeout)
}

// ProviderTask: the Docker Engine keeps no task list; boxsnap records none.
func (b *Backend) ProviderTask(context.Context, providers.TaskRef) (providers.TaskOutcome, error) {
	return providers.TaskOutcome{}, fmt.Errorf("the Docker engine keeps no tasks: %w", providers.ErrUnsupported)
}

// host names the engine in a guest: "docker" for a local one, else its
// host (and port).
func (e *engine) host() string {
	u, err := url.Parse(e.where())
	if err != nil || u.Scheme == "unix" || u.Host == "" {
		return "docker"
	}
	if u.Scheme == "ssh" {
		return u.Hostname()
	}
	return u.Host
}

// where is the engine's address as configured (the client's, for ssh://,
// is a stand-in).
func (e *engine) where() string {
	if e.cfg.Host != "" {
		return e.cfg.Host
	}
	return e.c.DaemonHost()
}
