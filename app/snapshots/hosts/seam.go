package hosts

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/boxsnap/boxsnap/app/operations"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/store"
	"github.com/boxsnap/boxsnap/app/store/db"
)

// Hosts are the hosts boxsnap runs on, this process's among them, and the
// move and takeover of the boxes they own.
type Hosts struct {
	k        kernel
	st       *store.Store
	restorer Restorer
	// templates give a carried box its template's environment; nil
	// carries none.
	templates Templates
	host      string
	// backfillEvery is how often each host's own work is queued
	// (UseBackfillEvery); 0 is BackfillEvery.
	backfillEvery time.Duration
	// works is whether this process runs River's workers (RunsWorkers).
	works  bool
	now    func() time.Time
	logger *slog.Logger
}

// kernel is what the hosts use of the core's kernel: the boxes and their
// snapshots as the caller may see them, the backends, the engine (a box's
// running operations), the box log and a snapshot's state;
// *snapshots.Service is one.
type kernel interface {
	Engine() *operations.Engine
	Backend(id string) (snapshots.Backend, error)
	Backends() []snapshots.Backend
	Box(ctx context.Context, c snapshots.Caller, ref string) (*snapshots.Box, error)
	SnapshotsOfBox(ctx context.Context, q db.DBTX, box string) ([]*snapshots.Snapshot, error)
	Log(ctx context.Context, q db.DBTX, box, kind string, c snapshots.Caller, words, snapshot, op string, data any)
	SnapshotByID(ctx context.Context, q db.DBTX, id string) (*snapshots.Snapshot, error)
	MoveState(ctx context.Context, q db.DBTX, sn *snapshots.Snapshot, to, errWords string) error
}

// Restorer admits a restore of a box from one of its snapshots: the
// restores seam is one. A move and a takeover carry a box over through it,
// its owner made the new host in the restore's own admission
// (RestoreRequest.Along).
type Restorer interface {
	Restore(ctx context.Context, c snapshots.Caller, req snapshots.RestoreRequest) (*snapshots.Operation, error)
}

// Options are what the hosts are made of: the store, the host this process
// runs on, the clock (nil is time.Now; the core's, so "seen" reads as its
// records') and the logger (nil discards).
type Options struct {
	Store  *store.Store
	Host   string
	Now    func() time.Time
	Logger *slog.Logger
}

// New makes the hosts on the core k.
func New(k kernel, opts Options) (*Hosts, error) {
	if k == nil || opts.Store == nil || opts.Host == "" {
		return nil, errors.New("hosts: the core, a store and this process's host are required")
	}
	h := &Hosts{k: k, st: opts.Store, host: opts.Host, now: opts.Now, logger: opts.Logger}
	if h.now == nil {
		h.now = time.Now
	}
	if h.logger == nil {
		h.logger = slog.New(slog.DiscardHandler)
	}
	return h, nil
}

// UseRestorer gives the hosts the restores, made after them.
func (h *Hosts) UseRestorer(r Restorer) { h.restorer = r }

// This is the host this process runs on.
func (h *Hosts) This() string { return h.host }

// BeatEvery is how often a process records its host as seen; SeenAliveFor
// is how long after it was last seen a host still counts as alive: a few
// beats, so a slow database or a pause never makes a live host look gone.
const (
	BeatEvery    = 15 * time.Second
	SeenAliveFor = 2 * time.Minute
	// BackfillEvery is how often each live host's own work runs (the
	// jobs' host-work): its backfill of snapshots from before the
	// content store.
	BackfillEvery = 5 * time.Minute
)

// BackfillPerRun bounds how many snapshots taken before the content store
// was set one run of a host's work ships, so a host with a long history
// ships it over many runs (oldest first) and each run ends soon.
const BackfillPerRun = 20

// TakeOverResult is what a takeover did: the boxes it carried over, each
// with its restore, and the boxes it left on the gone host, each with why.
type TakeOverResult struct {
	From  string    `json:"from"`
	To    string    `json:"to"`
	Taken []BoxMove `json:"taken"`
	Left  []BoxMove `json:"left"`
}

// BoxMove is one box of a takeover: the snapshot it was restored from and
// the restore's operation, or why it was left.
type BoxMove struct {
	Box       string `json:"box"`
	Name      string `json:"name"`
	Snapshot  string `json:"snapshot,omitempty"`
	Operation string `json:"operation,omitempty"`
	Why       string `json:"why,omitempty"`
}

// Templates reads a box template by name: the boxes seam is one. A box
// carried over runs with its template's environment, which no snapshot
// records.
type Templates interface {
	Template(ctx context.Context, name string) (snapshots.BoxTemplate, error)
}

// UseTemplates gives the hosts the box templates, made before them.
func (h *Hosts) UseTemplates(t Templates) { h.templates = t }
