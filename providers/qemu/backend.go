package qemu

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/digitalocean/go-libvirt"
	"github.com/digitalocean/go-libvirt/socket/dialers"

	"github.com/boxsnap/boxsnap/providers"
)

// KindLinux is the kind of box this backend makes: a Linux virtual machine.
const KindLinux = "linux"

// DefaultSocket is the system libvirtd's socket.
const DefaultSocket = "/run/libvirt/libvirt-sock"

// Accelerators name how QEMU runs a guest: kvm (hardware virtualisation)
// or tcg (QEMU's own translation, slower, always there); AccelAuto
// (accel.go) chooses between them.
const (
	AccelKVM = "kvm"
	AccelTCG = "tcg"
)

// Template is what a box is made from.
type Template struct {
	Kernel  string
	Initrd  string
	Cmdline string
	// Disk is the base qcow2 each box's disk is made over.
	Disk      string
	MemoryMiB int
	CPUs      int
	// ResetVersion is the identity reset's version the template's guest
	// carries, 0 where it has none (its snapshots are not fork-safe).
	ResetVersion int
}

// Config configures one QEMU backend.
type Config struct {
	// ID is the backend's ID in settings.
	ID string
	// Socket is libvirtd's unix socket (DefaultSocket when empty).
	Socket string
	// Install is the install ID written on labels.
	Install string
	// Dir is where boxes' disks, console logs and serial sockets live.
	Dir string
	// Templates are the templates boxes are made from, by name.
	Templates map[string]Template
	// Accel is AccelAuto (the default: ChooseAccel), or AccelKVM or
	// AccelTCG to force one.
	Accel  string
	Logger *slog.Logger
	// Hook, when set, is called at each named point of a take, a restore,
	// a delete and a fork (tests stop a worker there); it never changes
	// what happens.
	Hook func(point string)
}

// Backend is the QEMU backend.
type Backend struct {
	// The backend is this host's libvirtd, on its unix socket, with its
	// boxes' disks in this host's data folder, so its boxes are this
	// host's (providers.OneHost).
	providers.ThisHostOnly

	cfg Config
	log *slog.Logger

	mu sync.Mutex
	l  *libvirt.Libvirt

	// accelMu guards accel, the accelerator once chosen (AccelChoice).
	accelMu sync.Mutex
	accel   *AccelChoice

	// importMu is held while an import checks and publishes its batch.
	importMu sync.Mutex

	files      // the Browser's methods and the raw copies it reads (look.go)
	archives   // exports and imports (exports.go, imports.go)
	heldCopies // kept snapshots' held copies (heldcopy.go)
	outside    // the scan for reverts and takes made outside boxsnap (outside.go, outsidemark.go)
}

var (
	_ providers.Backend    = (*Backend)(nil)
	_ providers.Boxes      = (*Backend)(nil)
	_ providers.RunsReader = (*Backend)(nil)
	_ providers.Exporter   = (*Backend)(nil)
	_ providers.OneHost    = (*Backend)(nil)
)

// New makes a backend; it connects to libvirtd on first use.
func New(cfg Config) (*Backend, error) {
	if cfg.ID == "" {
		return nil, errors.New("qemu: a backend ID is required")
	}
	if cfg.Install == "" {
		return nil, fmt.Errorf("qemu %s: the install ID is required for labels", cfg.ID)
	}
	if cfg.Dir == "" {
		return nil, fmt.Errorf("qemu %s: the folder for boxes' disks is required", cfg.ID)
	}
	if cfg.Socket == "" {
		cfg.Socket = DefaultSocket
	}
	switch cfg.Accel {
	case "":
		cfg.Accel = AccelAuto
	case AccelAuto, AccelKVM, AccelTCG:
	default:
		return nil, fmt.Errorf("qemu %s: the accelerator %q is none of auto, kvm and tcg", cfg.ID, cfg.Accel)
	}
	if err := absolutePaths(&cfg); err != nil {
		return nil, fmt.Errorf("qemu %s: %w", cfg.ID, err)
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	b := &Backend{cfg: cfg, log: logger.With("backend", cfg.ID)}
	b.files.b = b
	b.archives.Backend = b
	b.heldCopies.Backend = b
	b.outside.Backend = b
	return b, nil
}

// at calls the hook at a named point.
func (b *Backend) at(point string) {
	if b.cfg.Hook != nil {
		b.cfg.Hook(point)
	}
}

// ID is the backend's ID in settings.
func (b *Backend) ID() string { return b.cfg.ID }

// Close ends the connection to libvirtd.
func (b *Backend) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.l == nil || !b.l.IsConnected() {
		return nil
	}
	return b.l.Disconnect()
}

// conn answers a connection to libvirtd, connecting on first use and again
// after a lost one.
func (b *Backend) conn(ctx context.Context) (*libvirt.Libvirt, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.l != nil && b.l.IsConnected() {
		return b.l, nil
	}
	l := libvirt.NewWithDialer(dialers.NewLocal(dialers.WithSocket(b.cfg.Socket), dialers.WithLocalTimeout(5*time.Second)))
	if err := l.ConnectToURI(libvirt.QEMUSystem); err != nil {
		return nil, fmt.Errorf("qemu %s: connect to libvirtd at %s: %v: %w", b.cfg.ID, b.cfg.Socket, err, providers.ErrUnreachable)
	}
	b.l = l
	return l, nil
}

// Ping checks that libvirtd answers.
func (b *Backend) Ping(ctx context.Context) error {
	l, err := b.conn(ctx)
	if err != nil {
		return err
	}
	if _, err := l.ConnectGetVersion(); err != nil {
		return fmt.Errorf("qemu %s: libvirtd's version: %v: %w", b.cfg.ID, err, providers.ErrUnreachable)
	}
	return nil
}

// isNoSnapshot reports libvirt's "no such snapshot".
func isNoSnapshot(err error) bool {
	var e libvirt.Error
	return errors.As(err, &e) && e.Code == uint32(libvirt.ErrNoDomainSnapshot)
}

// domain finds the guest's domain; a missing one wraps ErrNotFound.
func (b *Backend) domain(ctx context.Context, g providers.Guest) (*libvirt.Libvirt, libvirt.Domain, error) {
	l, err := b.conn(ctx)
	if err != nil {
		return nil, libvirt.Domain{}, err
	}
	d, err := l.DomainLookupByName(g.Ref)
	if libvirt.IsNotFound(err) {
		return l, d, fmt.Errorf("guest %s: %w", g.Ref, providers.ErrNotFound)
	}
	if err != nil {
		return l, d, fmt.Errorf("look up guest %s: %w", g.Ref, err)
	}
	return l, d, nil
}

// runs reports whether the domain runs (paused counts as running: its
// memory is there).
func runs(l *libvirt.Libvirt, d libvirt.Domain) (bool, error) {
	st, _, err := l.DomainGetState(d, 0)
	if err != nil {
		return false, fmt.Errorf("state of %s: %w", d.Name, err)
	}
	return st != int32(libvirt.DomainShutoff) && st != int32(libvirt.DomainShutdown) && st != int32(libvirt.DomainCrashed) && st != int32(libvirt.DomainNostate), nil
}

// Runs reports whether the guest runs.
func (b *Backend) Runs(ctx context.Context, g providers.Guest) (bool, error) {
	l, d, err := b.domain(ctx, g)
	if err != nil {
		return false, err
	}
	return runs(l, d)
}

// ProviderTask: libvirt keeps no tasks; each call returns when it is done.
func (b *Backend) ProviderTask(context.Context, providers.TaskRef) (providers.TaskOutcome, error) {
	return providers.TaskOutcome{}, fmt.Errorf("libvirt keeps no tasks: %w", providers.ErrUnsupported)
}

// archives answers the backend's exports and imports (providers.Exporter),
// and finds where a snapshot's disk is read from (exports.go, imports.go);
// the Backend embeds it.
type archives struct{ *Backend }

// heldCopies makes, lists and removes kept snapshots' held copies
// (heldcopy.go); the Backend embeds it.
type heldCopies struct{ *Backend }

// outside keeps the marks by which a revert made outside boxsnap is seen
// (outsidemark.go), lists this install's domains and answers the scan for
// it (outside.go, providers.TaskLister); the Backend embeds it.
type outside struct{ *Backend }

// absolutePaths makes the backend's folder and its templates' files
// absolute paths, from boxsnap's working folder: libvirtd reads a
// domain's kernel, initrd and disk from its own, and qemu-img reads a
// backing file's relative path from the folder of the disk made over it.
// The templates are copied, not changed in the caller's map.
func absolutePaths(cfg *Config) error {
	dir, err := filepath.Abs(cfg.Dir)
	if err != nil {
		return fmt.Errorf("the folder for boxes' disks: %w", err)
	}
	cfg.Dir = dir
	templates := make(map[string]Template, len(cfg.Templates))
	for name, t := range cfg.Templates {
		for _, p := range []*string{&t.Kernel, &t.Initrd, &t.Disk} {
			if *p == "" {
				continue
			}
			if *p, err = filepath.Abs(*p); err != nil {
				return fmt.Errorf("template %s: %w", name, err)
			}
		}
		templates[name] = t
	}
	cfg.Templates = templates
	return nil
}

func (b *Backend) guest(name string) providers.Guest {
	return providers.Guest{Backend: b.cfg.ID, Kind: KindLinux, Ref: name, Generation: 1}
}

// qemuImg runs qemu-img with args.
func qemuImg(ctx context.Context, args ...string) error {
	cmd := exec.CommandContext(ctx, "qemu-img", args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("qemu-img %s: %w: %s", args[0], err, strings.TrimSpace(out.String()))
	}
	return nil
}
