package local

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/local/apply"
	"github.com/boxsnap/boxsnap/providers/local/browse"
	"github.com/boxsnap/boxsnap/providers/local/capture"
	"github.com/boxsnap/boxsnap/providers/local/confined"
	"github.com/boxsnap/boxsnap/providers/local/content"
	"github.com/boxsnap/boxsnap/providers/local/disks"
	"github.com/boxsnap/boxsnap/providers/local/exports"
	"github.com/boxsnap/boxsnap/providers/local/held"
	"github.com/boxsnap/boxsnap/providers/local/journal"
	"github.com/boxsnap/boxsnap/providers/local/owners"
	"github.com/boxsnap/boxsnap/providers/local/process"
	"github.com/boxsnap/boxsnap/providers/local/ship"
	"github.com/boxsnap/boxsnap/providers/local/state"
	"github.com/boxsnap/boxsnap/providers/local/store"
	"github.com/boxsnap/boxsnap/providers/local/sweep"
)

// Compile-time checks: the local backend offers every interface.
var (
	_ providers.Backend     = (*Backend)(nil)
	_ providers.Boxes       = (*Backend)(nil)
	_ providers.Labeler     = (*Backend)(nil)
	_ providers.Browser     = (*Backend)(nil)
	_ providers.Exporter    = (*Backend)(nil)
	_ providers.ReadChecker = (*Backend)(nil)
)

// Defaults of Config.
const (
	// DefaultID is the backend's ID in settings.
	DefaultID = "local"
	// DefaultStopTimeout is how long Stop waits after SIGTERM before SIGKILL.
	DefaultStopTimeout = 10 * time.Second
	// DefaultWorkers is how many files a take or a restore copies at once.
	DefaultWorkers = 4
)

// IdentityResetVersion is the version of the identity reset this backend
// performs on a fork: written in every box's identity marker.
const IdentityResetVersion = 1

// Config configures the local backend.
type Config struct {
	// ID is the backend's ID in settings; DefaultID when empty.
	ID string
	// Root is the folder that holds boxes, snapshots and content. Required.
	Root string
	// Install is this install's ID, written on every label; HeldSnapshots
	// lists only this install's snapshots when it is set.
	Install string
	// Host names this machine in guests; the hostname when empty.
	Host string
	// Templates is the folder a relative BoxSpec.Template is found in.
	Templates string
	// Logger receives the backend's logs; slog.Default() when nil.
	Logger *slog.Logger
	// StopTimeout bounds Stop's wait after SIGTERM; DefaultStopTimeout when 0.
	StopTimeout time.Duration
	// Workers is how many files are copied at once; DefaultWorkers when 0.
	Workers int
	// NoSync skips the one syncfs a take makes before it writes a manifest,
	// and the one a restore or a fork makes before it says done. Only for
	// tests and benchmarks: after a power cut a manifest could then name
	// content that never reached the disk (a restore's checksum finds it),
	// and a restored box lose files its record says it holds.
	NoSync bool
	// NoJournal turns the change journal off (package journal): every take and
	// restore walks the box's folder. For a folder on a file system inotify
	// cannot watch whole, or a box whose programs write through mmap.
	NoJournal bool
	// JournalPaths caps the changed paths a box's journal remembers between
	// takes; past it the next take walks. DefaultJournalPaths when 0.
	JournalPaths int
	// Self is boxsnap's own executable, which a box's command may run (the
	// demo's web app is `boxsnap demo-app`); os.Executable() when empty.
	Self string
	// MaxImportBytes bounds the content one import's batch unpacks (an
	// archive is compressed: a small upload can unpack to far more);
	// DefaultMaxImportBytes when 0.
	MaxImportBytes int64
	// DiskImages gives each new box a file system of its own (package disks),
	// which bounds its disk to the byte, where a loop mount works. Off,
	// every box's disk is bounded by the watch that measures its folder
	// (disk.go). boxsnap's configuration turns it on by default
	// (BOXSNAP_LOCAL_DISK_IMAGES).
	DiskImages bool
	// DiskBytes is the disk bound of a box whose template sets none;
	// DefaultDiskBytes when 0. Tests that make many boxes set a small one:
	// each image takes room on the host at once (a 16 GiB one about
	// 170 MiB, a 256 MiB one about 95 MiB).
	DiskBytes int64
	// Price makes this backend charge for holding a snapshot, as a paid
	// provider does. Only tests set it, to prove the paid ceiling's
	// arithmetic (paid snapshots stay off until a live check on a real paid
	// plan); boxsnap's configuration has no way to.
	Price *providers.Price
	// ContentStore keeps every snapshot in an S3 bucket too (package
	// ship): a take is whole only once its manifest and every object it
	// names are there, and a restore or fork fetches the content this host
	// lacks. Nil keeps snapshots on this host alone.
	ContentStore *ship.Remote
	// ContentCacheBytes bounds the content this host keeps with a content
	// store: past it, a take, a restore and a fork end by removing the
	// content least recently read that the bucket holds (reads fetch it
	// back). 0 bounds it by ContentCachePercent; NoCacheBound keeps it
	// all.
	ContentCacheBytes int64
	// ContentCachePercent is the bound, when ContentCacheBytes is 0, as a
	// share of the file system holding the content, 1 to 100;
	// DefaultCachePercent when 0.
	ContentCachePercent int
	// MayFetch answers, before a snapshot this host does not hold is
	// fetched from the content store, whether its record still stands: an
	// error wrapping providers.ErrNotFound (deleted, or being deleted) makes
	// the snapshot missing here, as one never taken is, though its objects
	// wait in the bucket for the sweep. Nil fetches any.
	MayFetch func(ctx context.Context, snapshot string) error
}

// hooks lets this package's own tests reach inside a take or a start, to
// make a file change mid-take or an owner die mid-start. Nil outside tests.
type hooks struct {
	// Hooks reach inside a take's capture.
	capture.Hooks
	// spawned runs in a start once the box's process runs, before its
	// state file records that process.
	spawned func()
	// synced runs once a restore or a fork has put the box's files on
	// disk (syncWritten), with the box's folder.
	synced func(dir string)
	// resetStep runs at each step of a reset (ResetGuest), with its name.
	resetStep func(step string)
}

// Backend is the local backend: boxes are folders on this host, snapshots are
// content-addressed copies of them (see doc.go).
type Backend struct {
	*store.Store
	// Sharing answers whether other hosts reach the snapshots' content.
	Sharing
	// A box's folder is this host's alone (providers.OneHost).
	providers.ThisHostOnly
	// Set is the running boxes' change journals.
	*journal.Set
	// Processes runs the boxes' processes: their users, sandboxes,
	// cgroups and networks.
	*process.Processes
	// Deletes deletes snapshots and sweeps the content no snapshot holds.
	*sweep.Deletes
	// Copier copies and hashes content into the store.
	*content.Copier
	// Exports answers exports, imports and scrubs.
	*exports.Exports
	// Files answers browsing and comparing snapshots and boxes.
	*browse.Files
	// Scanner walks a box's folder beneath it; the journals and Files
	// share it.
	*confined.Scanner
	// Disks makes, mounts and swaps the boxes' own file systems.
	*disks.Disks
	// States reads and writes the boxes' state files.
	*state.States
	// Reads answers from the journals what changed in a box.
	*journal.Reads
	// Owners reaches the box processes other boxsnap processes started.
	*owners.Owners
	// Held lists the snapshots the store holds.
	*held.Held
	// Capturer takes a box's folder into the store.
	*capture.Capturer
	// Writer writes snapshots into boxes' folders and templates into new
	// ones.
	*apply.Writer
	// shipper ships snapshots to the content store and fetches them back;
	// with no content store it does nothing.
	shipper *ship.Shipper
	// Shipping ships the snapshots from before the content store and
	// reads how a snapshot's box ran.
	*Shipping
	// Forks makes new boxes from snapshots.
	Forks

	id      string
	root    string
	install string
	host    string
	log     *slog.Logger
	stopTO  time.Duration
	workers int
	noSync  bool
	price   *providers.Price

	maxImport int64 // the content one import's batch may unpack

	diskBytes int64 // Config.DiskBytes

	hooks hooks

	shares forkShares // whether forks share their snapshot's tree here

	mu    sync.Mutex
	procs map[string]*proc // running box processes, by box ID
	// owner is this process's name as the owner of the box processes it
	// starts (SetOwner, owner.go); "" for one process alone.
	owner string
	// leave is set in a process that runs no box process (LeaveProcesses).
	leave bool
	// cleanOnce runs cleanCgroups once, at the first restart or takeover.
	cleanOnce sync.Once
}

// Forks is the local backend's part that makes new boxes from snapshots
// (fork.go): ForkSnapshot, and ForkSnapshotCarried (providers.CarriedFork)
// for a fork of a snapshot whose box's state this host does not hold.
type Forks struct{ b *Backend }

// ID is the backend's ID in settings.
func (b *Backend) ID() string { return b.id }

// Root is the folder the backend keeps everything in.
func (b *Backend) Root() string { return b.root }

// BoxDir is the folder of a box's files.
func (b *Backend) BoxDir(guest providers.Guest) string { return b.Store.BoxDir(guest.Ref) }

// Change is what ChangedSinceTake found (package journal).
type Change = journal.Change
