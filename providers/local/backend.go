package local

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/local/diskimage"
	"github.com/boxsnap/boxsnap/providers/local/store"
)

// Compile-time checks: the local backend offers every interface.
var (
	_ providers.Backend  = (*Backend)(nil)
	_ providers.Boxes    = (*Backend)(nil)
	_ providers.Labeler  = (*Backend)(nil)
	_ providers.Browser  = (*Backend)(nil)
	_ providers.Exporter = (*Backend)(nil)
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
	// NoSync skips the one syncfs a take makes before it writes a manifest.
	// Only for tests and benchmarks: after a power cut a manifest could then
	// name content that never reached the disk (a restore's checksum finds it).
	NoSync bool
	// NoJournal turns the change journal off (journal.go): every take and
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
	// DiskImages gives each new box a file system of its own (image.go),
	// which bounds its disk to the byte, where a loop mount works. Off (the
	// default), every box's disk is bounded by the watch that measures its
	// folder (disk.go). It is not the default because an image takes room
	// on the host at once (a 16 GiB box about 360 MiB: its inode tables,
	// its journal, the room ahead of its writes), which many boxes at once
	// (a test suite's) fill a host with.
	DiskImages bool
	// Price makes this backend charge for holding a snapshot, as a paid
	// provider does. Only tests set it, to prove the paid ceiling's
	// arithmetic (paid snapshots stay off until a live check on a real paid
	// plan); boxsnap's configuration has no way to.
	Price *providers.Price
}

// hooks lets this package's own tests reach inside a take, a delete or a
// start, to make a file change mid-take, a delete stop part way or an owner
// die mid-start. Nil outside tests.
type hooks struct {
	mu sync.Mutex

	// afterScan runs after a take's scan, before links are read and files
	// copied.
	afterScan func()
	// afterCopy runs after a file's content was copied, before its re-stat.
	afterCopy func(rel string)
	// deleteStep runs before each step of a delete; an error stops it there.
	deleteStep func(step string) error
	// spawned runs in a start once the box's process runs, before its
	// state file records that process.
	spawned func()
}

// Backend is the local backend: boxes are folders on this host, snapshots are
// content-addressed copies of them (see doc.go).
type Backend struct {
	*store.Store

	id      string
	root    string
	install string
	host    string
	tmpl    string
	log     *slog.Logger
	stopTO  time.Duration
	workers int
	noSync  bool
	price   *providers.Price

	maxImport int64 // the content one import's batch may unpack

	diskImages bool             // Config.DiskImages
	loopOnce   sync.Once        // DiskBounding's probe, once
	loopWhy    string           // why a box gets no file system of its own; "" when it does
	loopFix    string           // what makes it get one
	grow       diskimage.Grower // gives mounted images room ahead

	noJournal    bool
	journalPaths int
	journals     journals // running boxes' change journals

	noClone   atomic.Bool // the file system refused a reflink once
	noRange   atomic.Bool // copy_file_range was refused once: plain reads and writes
	noTmpfile atomic.Bool // the file system refused O_TMPFILE once
	bufs      sync.Pool
	hooks     hooks

	mu    sync.Mutex
	procs map[string]*proc // running box processes, by box ID
	// owner is this process's name as the owner of the box processes it
	// starts (SetOwner, owner.go); "" for one process alone.
	owner string
	// leave is set in a process that runs no box process (LeaveProcesses).
	leave bool
	// warnedUser is set once the log said a template's user cannot be
	// switched to (boxsnap does not run as root).
	warnedUser bool
	// warnedPasta is set once the log said pasta is not installed.
	warnedPasta bool

	cgOnce sync.Once
	cg     cgroups // where box cgroups are made (boxCgroups)
	// cleanOnce runs cleanCgroups once, at the first restart or takeover.
	cleanOnce sync.Once

	bwrapOnce sync.Once
	bwrap     string // bwrap's path when box processes run inside it
	selfPath  string // Config.Self

	ratesMu sync.Mutex
	present presentSet // content found in the store since the last free
}

// New opens (or makes) the backend's store under cfg.Root. It starts no
// process: RestartRunning does, when the caller wants boxes that were running
// at the last stop to run again.
func New(cfg Config) (*Backend, error) {
	if cfg.Root == "" {
		return nil, errors.New("local backend: Config.Root is required")
	}
	root, err := filepath.Abs(cfg.Root)
	if err != nil {
		return nil, fmt.Errorf("local backend: root: %w", err)
	}
	b := &Backend{
		Store:   store.NewStore(root),
		id:      cfg.ID,
		root:    root,
		install: cfg.Install,
		host:    cfg.Host,
		tmpl:    cfg.Templates,
		log:     cfg.Logger,
		stopTO:  cfg.StopTimeout,
		workers: cfg.Workers,
		noSync:  cfg.NoSync,
		price:   cfg.Price,
		procs:   make(map[string]*proc),

		noJournal:    cfg.NoJournal,
		journalPaths: cfg.JournalPaths,
		selfPath:     cfg.Self,
		maxImport:    cfg.MaxImportBytes,
		diskImages:   cfg.DiskImages,
	}
	if b.maxImport <= 0 {
		b.maxImport = DefaultMaxImportBytes
	}
	if b.journalPaths <= 0 {
		b.journalPaths = DefaultJournalPaths
	}
	if b.id == "" {
		b.id = DefaultID
	}
	if b.host == "" {
		b.host, _ = os.Hostname()
	}
	if b.log == nil {
		b.log = slog.Default()
	}
	if b.stopTO <= 0 {
		b.stopTO = DefaultStopTimeout
	}
	if b.workers <= 0 {
		b.workers = DefaultWorkers
	}
	b.bufs.New = func() any { p := make([]byte, hashBufSize); return &p }
	// The folders above the root that boxsnap makes let a box's user pass.
	if err := MakeFolder(root); err != nil {
		return nil, fmt.Errorf("local backend: make %s: %w", root, err)
	}
	for _, d := range []string{store.DirBoxes, store.DirState, store.DirSnapshots, store.DirContent, store.DirTmp, store.DirGroups, dirDisks} {
		if err := os.MkdirAll(b.Path(d), 0o700); err != nil {
			return nil, fmt.Errorf("local backend: make %s: %w", d, err)
		}
	}
	if os.Geteuid() == 0 {
		// A box's process runs as an unprivileged user: it must pass through
		// to its own folder, without listing the others.
		for _, d := range []string{b.root, b.Path(store.DirBoxes)} {
			if err := os.Chmod(d, 0o711); err != nil {
				return nil, fmt.Errorf("local backend: %w", err)
			}
		}
	}
	for i := 0; i < 256; i++ {
		if err := os.MkdirAll(b.Path(store.DirContent, fmt.Sprintf("%02x", i)), 0o700); err != nil {
			return nil, fmt.Errorf("local backend: make content folders: %w", err)
		}
	}
	return b, nil
}

// ID is the backend's ID in settings.
func (b *Backend) ID() string { return b.id }

// Root is the folder the backend keeps everything in.
func (b *Backend) Root() string { return b.root }

// BoxDir is the folder of a box's files.
func (b *Backend) BoxDir(guest providers.Guest) string { return b.Store.BoxDir(guest.Ref) }

// Snapshotting is the same for every kind: a folder snapshots the same way
// whatever runs in it.
func (b *Backend) Snapshotting(kind string) *providers.Snapshotting {
	return &providers.Snapshotting{
		Scope:            providers.ScopeBox,
		Holds:            []providers.Holds{providers.HoldsDisk},
		WhileRunning:     providers.WhileRunningPauses,
		Restore:          providers.RestoreInPlace,
		Fork:             providers.ForkCopy,
		KeepsPastRelease: providers.KeepsAsIs,
		Lives:            providers.LivesHost,
		Price:            b.price,
		Excludes:         excludes,
	}
}

// excludes is what a snapshot leaves out, in the restore dialog's words.
const excludes = "sockets and device files"

// ProviderTask: the local backend runs no provider tasks; every operation
// finishes inside its call.
func (b *Backend) ProviderTask(ctx context.Context, task providers.TaskRef) (providers.TaskOutcome, error) {
	return providers.TaskOutcome{}, fmt.Errorf("local backend task %s: %w", task.ID, providers.ErrUnsupported)
}

// rates is the running measure of how fast takes go, kept in rates.json.
type rates struct {
	BytesPerSecond float64 `json:"bytesPerSecond"`
	FilesPerSecond float64 `json:"filesPerSecond"`
}

// Starting rates before any take was measured: a modest disk.
const (
	defaultBytesPerSecond = 200 << 20
	defaultFilesPerSecond = 50000
	// rateWeight is the weight of a new measure in the running rate.
	rateWeight = 0.3
	// Measures below these are too small to say anything.
	minMeasuredBytes = 4 << 20
	minMeasuredFiles = 1000
)

func (b *Backend) readRates() rates {
	b.ratesMu.Lock()
	defer b.ratesMu.Unlock()
	return b.readRatesLocked()
}

func (b *Backend) readRatesLocked() rates {
	r := rates{BytesPerSecond: defaultBytesPerSecond, FilesPerSecond: defaultFilesPerSecond}
	data, err := os.ReadFile(b.Path(store.FileRates))
	if err != nil {
		return r
	}
	var got rates
	if json.Unmarshal(data, &got) == nil && got.BytesPerSecond > 0 && got.FilesPerSecond > 0 {
		return got
	}
	return r
}

// measure folds one take's figures into the running rates.
func (b *Backend) measure(files int, statTime time.Duration, bytes int64, copyTime time.Duration) {
	b.ratesMu.Lock()
	defer b.ratesMu.Unlock()
	r := b.readRatesLocked()
	changed := false
	if files >= minMeasuredFiles && statTime > 0 {
		r.FilesPerSecond = (1-rateWeight)*r.FilesPerSecond + rateWeight*float64(files)/statTime.Seconds()
		changed = true
	}
	if bytes >= minMeasuredBytes && copyTime > 0 {
		r.BytesPerSecond = (1-rateWeight)*r.BytesPerSecond + rateWeight*float64(bytes)/copyTime.Seconds()
		changed = true
	}
	if !changed {
		return
	}
	data, _ := json.Marshal(r)
	if err := store.ReplaceFile(b.Path(store.FileRates), data, 0o600); err != nil {
		b.log.Warn("local backend: could not keep the measured rates", "err", err)
	}
}

// estimate is how long a take of files stats and bytes of new content takes.
func (r rates) estimate(files int, bytes int64) time.Duration {
	d := time.Duration(float64(files)/r.FilesPerSecond*float64(time.Second)) +
		time.Duration(float64(bytes)/r.BytesPerSecond*float64(time.Second))
	if d < time.Millisecond {
		d = time.Millisecond
	}
	return d
}
