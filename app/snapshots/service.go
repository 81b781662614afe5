package snapshots

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"time"

	// The owner's time zone is loaded by name; the zone database is linked
	// in, so a machine without tzdata still says times in it.
	_ "time/tzdata"

	"github.com/jackc/pgx/v5"

	"github.com/boxsnap/boxsnap/app/operations"
	"github.com/boxsnap/boxsnap/app/store"
	"github.com/boxsnap/boxsnap/app/store/db"
	"github.com/boxsnap/boxsnap/providers"
)

// QueueOperations is the River queue operations run on.
const QueueOperations = operations.Queue

// OperationArgs is the River job of one operation (operations.Args).
type OperationArgs = operations.Args

// Inserter inserts a River job in a transaction; *river.Client[pgx.Tx] is
// one.
type Inserter = operations.Inserter

// Backend is one configured backend as the core uses it.
type Backend struct {
	ID    string
	Kind  string
	Label string
	// Note is what Settings → Backends says under the label (QEMU's:
	// which accelerator runs its guests, and how to get KVM); the label
	// alone names the backend in refusals, dialogs and logs.
	Note      string
	Simulated bool
	Snap      providers.Backend
	Boxes     providers.Boxes
}

// OneHost reports whether b's boxes are each one host's: their guests only
// the host that made them reaches (providers.OneHost).
func (b Backend) OneHost() bool {
	o, ok := b.Snap.(providers.OneHost)
	return ok && o.OneHost()
}

// Options configure the core.
type Options struct {
	Store    *store.Store
	Backends []Backend
	Install  string
	// Host is the host this process runs on (BOXSNAP_HOST), which owns the
	// boxes it makes on a one-host backend; empty: none recorded.
	Host   string
	Logger *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// TaskSnooze is how long an operation's job sleeps between two looks at
	// its provider task; 0 means operations.DefaultSnooze.
	TaskSnooze time.Duration
}

// Service is the core's snapshot rules and their operations: the undo a
// restore or a reset takes, and lists. What the seams share (the store,
// the backends, the engine, the settings and the record reads) is the
// Kernel's, embedded in it. The boxes and threads (package boxes, which the
// lists read through UseBoxes), the periodic work (package sweeps), a
// snapshot's contents and moves (package contents), the Snapshots tab's
// lists (package tab), the take (package take), a restore and a reset
// (package restore), the fork (package fork), a snapshot's keep, delete
// and edits (package keep), requests for the person's word (package
// approvals), the heads (package heads), the dry runs (package plans), a
// box's page's read model (package boxview) and pictures of a box's screen
// (package pictures) are packages of their own,
// which reach the core through small interfaces they declare.
type Service struct {
	*Kernel
}

// BoxReader is what the kernel asks of package boxes: the boxes a caller
// may see (the snapshot lists read them). app/boot gives it through
// UseBoxes.
type BoxReader interface {
	List(ctx context.Context, c Caller) ([]*Box, error)
}

// UseBoxes gives the kernel package boxes, which the snapshot lists read
// boxes through.
func (s *Kernel) UseBoxes(b BoxReader) { s.boxes = b }

// Kernel is what every seam of the service shares: the store, the backends,
// the engine and its kinds, and the helpers each seam uses. Its parts are
// types of their own that it embeds: Records (the record reads), Admission
// (an operation admitted), BoxLog (the box log's writer) and SettingsKeeper
// (the settings, the time zone and what a copy of a box leaves behind).
// Its snaps is the Service, so that the kernel calls a
// snapshot operation through its type; boxes is package boxes, which the
// lists read boxes through (UseBoxes); pictures is package pictures'
// keeper (UsePictures).
type Kernel struct {
	snaps    *Service
	boxes    BoxReader
	st       *store.Store
	backends map[string]Backend
	order    []string
	install  string
	host     string
	logger   *slog.Logger
	now      func() time.Time
	ops      *operations.Engine
	pictures PictureKeeper
	// Its parts, each with the fields it uses; their methods are the
	// Kernel's, so a seam reaches them through *Service.
	*Records
	*Admission
	*BoxLog
	*SettingsKeeper
}

// New makes the core.
func New(opts Options) (*Service, error) {
	if opts.Store == nil {
		return nil, errors.New("snapshots: a store is required")
	}
	s := &Service{&Kernel{st: opts.Store, install: opts.Install, host: opts.Host, logger: opts.Logger, now: opts.Now, backends: map[string]Backend{}}}
	s.snaps = s
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	if s.now == nil {
		s.now = time.Now
	}
	for _, b := range opts.Backends {
		if b.Snap == nil || b.Boxes == nil {
			return nil, fmt.Errorf("snapshots: backend %s lacks its snapshots or boxes side", b.ID)
		}
		s.backends[b.ID] = b
		s.order = append(s.order, b.ID)
	}
	sort.Strings(s.order)
	ops, err := operations.New(operations.Options{Store: opts.Store, Logger: s.logger, Snooze: opts.TaskSnooze})
	if err != nil {
		return nil, err
	}
	s.ops = ops
	s.Records, s.Admission, s.BoxLog, s.SettingsKeeper = newParts(opts.Store, ops, s.logger, s.now)
	s.register()
	return s, nil
}

// UseJobs gives the core River's client, made after the core because its
// workers call the core.
func (s *Kernel) UseJobs(j Inserter) { s.ops.UseJobs(j) }

// Install is this install's ID.
func (s *Kernel) Install() string { return s.install }

// OwnerFor is the host that owns a box this process makes (or forks, or
// imports) on be: this host when be is one host's (Backend.OneHost), else
// nil, as every host reaches be.
func (s *Kernel) OwnerFor(be Backend) *string {
	if !be.OneHost() || s.host == "" {
		return nil
	}
	h := s.host
	return &h
}

// Backends lists the configured backends in ID order.
func (s *Kernel) Backends() []Backend {
	out := make([]Backend, 0, len(s.order))
	for _, id := range s.order {
		out = append(out, s.backends[id])
	}
	return out
}

// RegisterBackends records the configured backends in the database, so that
// boxes and snapshots can refer to them.
func (s *Kernel) RegisterBackends(ctx context.Context) error {
	for _, b := range s.Backends() {
		if err := s.st.CoreBackendUpsert(ctx, s.st.Pool, db.CoreBackendUpsertParams{ID: b.ID, Kind: b.Kind, Label: b.Label, Simulated: b.Simulated}); err != nil {
			return fmt.Errorf("register backend %s: %w", b.ID, err)
		}
	}
	return nil
}

// Backend is the configured backend of that ID; one not in settings is a
// refusal that says so.
func (s *Kernel) Backend(id string) (Backend, error) {
	b, ok := s.backends[id]
	if !ok {
		return Backend{}, &Refusal{Code: CodePlan, Words: backendNotInSettingsWords(id), TryAgain: true}
	}
	return b, nil
}

// TimeZone is the owner's time zone, for names and words.
func (s *SettingsKeeper) TimeZone(ctx context.Context) *time.Location {
	s.cache.mu.Lock()
	defer s.cache.mu.Unlock()
	if s.cache.tz != nil && s.now().Before(s.cache.tzUntil) {
		return s.cache.tz
	}
	tz := time.UTC
	name, err := s.st.OwnerTimeZone(ctx, s.st.Pool)
	if err == nil {
		tz, err = time.LoadLocation(name)
	}
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		s.logger.Warn("the owner's time zone: UTC in its place", "err", err)
	}
	if tz == nil {
		tz = time.UTC
	}
	s.cache.tz, s.cache.tzUntil = tz, s.now().Add(readCacheFor)
	return tz
}

// newParts makes the kernel's parts over one store and engine.
func newParts(st *store.Store, ops *operations.Engine, logger *slog.Logger, now func() time.Time) (*Records, *Admission, *BoxLog, *SettingsKeeper) {
	r := &Records{st: st}
	return r, &Admission{Records: r, st: st, ops: ops}, &BoxLog{st: st, ops: ops, logger: logger},
		&SettingsKeeper{st: st, logger: logger, now: now}
}

// GuestOf is the guest a box stands for, as its backend names it.
func GuestOf(b *Box) providers.Guest {
	return providers.Guest{Backend: b.BackendID, Kind: b.Kind, Host: b.Host, Ref: b.GuestRef, Generation: b.Generation}
}

// RefOf is how a backend names a snapshot of box b (b may be nil for a
// held copy or an earlier guest).
func RefOf(sn *Snapshot, b *Box) providers.SnapshotRef {
	g := providers.Guest{Backend: sn.BackendID, Kind: sn.BoxKind, Host: sn.Host, Generation: sn.GuestGeneration}
	switch {
	case sn.GuestRef != nil && sn.Guest != "current":
		g.Ref = *sn.GuestRef // a held copy, or the box's earlier guest
	case b != nil:
		g.Ref = b.GuestRef
	}
	return providers.SnapshotRef{ID: sn.ID, Ref: sn.Ref, Guest: g, Storage: sn.Storage, Where: sn.Guest}
}
