package local

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

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
	"github.com/boxsnap/boxsnap/providers/local/state"
	"github.com/boxsnap/boxsnap/providers/local/store"
	"github.com/boxsnap/boxsnap/providers/local/sweep"
)

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
		log:     cfg.Logger,
		stopTO:  cfg.StopTimeout,
		workers: cfg.Workers,
		noSync:  cfg.NoSync,
		price:   cfg.Price,
		procs:   make(map[string]*proc),

		maxImport: cfg.MaxImportBytes,
		diskBytes: cfg.DiskBytes,
	}
	b.Forks = Forks{b}
	if b.maxImport <= 0 {
		b.maxImport = exports.DefaultMaxImportBytes
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
	b.Disks = &disks.Disks{Store: b.Store, Log: b.log, Root: root, DiskImages: cfg.DiskImages}
	b.Processes = process.NewProcesses(b.log, root, cfg.Self, func(lim providers.BoxLimits) int64 { return diskBound(lim, b.diskBytes) })
	if b.stopTO <= 0 {
		b.stopTO = DefaultStopTimeout
	}
	if b.workers <= 0 {
		b.workers = DefaultWorkers
	}
	journalPaths := cfg.JournalPaths
	if journalPaths <= 0 {
		journalPaths = journal.DefaultJournalPaths
	}
	b.Set = journal.NewSet(confined.NewScanner(b.workers), journalPaths, cfg.NoJournal)
	b.Set.UpperOf = overlayUpper
	b.Copier = content.NewCopier()
	b.Deletes = &sweep.Deletes{Store: b.Store, Copier: b.Copier, Log: b.log, Forks: resets{b}.sweepCutShort}
	// The folders above the root that boxsnap makes let a box's user pass.
	if err := process.MakeFolder(root); err != nil {
		return nil, fmt.Errorf("local backend: make %s: %w", root, err)
	}
	for _, d := range []string{store.DirBoxes, store.DirState, store.DirSnapshots, store.DirContent, store.DirTmp, store.DirGroups, disks.DirDisks} {
		if err := os.MkdirAll(b.Path(d), 0o700); err != nil {
			return nil, fmt.Errorf("local backend: make %s: %w", d, err)
		}
	}
	store.SpreadFolders(b.Path(store.DirTmp))
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
	b.Writer = &apply.Writer{Store: b.Store, Copier: b.Copier, Scanner: b.Set.Scanner, Log: b.log, Workers: b.workers, Templates: cfg.Templates,
		ExistingBox: b.existingBox}
	b.States = &state.States{Store: b.Store, Mu: &b.mu}
	b.Reads = &journal.Reads{Set: b.Set, Store: b.Store, States: b.States, ExistingBox: b.existingBox}
	b.Owners = &owners.Owners{Store: b.Store, Processes: b.Processes, Log: b.log, StopTO: b.stopTO}
	b.Held = held.New(b.Store, b.id, b.host, b.install, b.guestOf)
	b.Capturer = &capture.Capturer{Writer: b.Writer, ID: b.id, Install: b.install, States: b.States, Price: b.price, Root: root, NoSync: b.noSync, Hooks: &b.hooks.Hooks,
		ForksShare: func() bool { return b.shares.offers(b) }, UpperOf: overlayUpper}
	b.Exports = &exports.Exports{Store: b.Store, Log: b.log, Id: b.id, Install: b.install, MaxImport: b.maxImport, Mu: &b.mu,
		LoadUsable: loadWhole(b.Store, cfg.ContentStore != nil), MarkDamaged: b.Writer.MarkDamaged, SyncContent: b.Capturer.SyncContent, Storage: b.Capturer.Storage,
		ImportUser: b.importUser, GuestOf: b.guestOf}
	b.Scanner = b.Set.Scanner
	b.Files = &browse.Files{Store: b.Store, Scanner: b.Set.Scanner, Workers: b.workers,
		LoadUsable: b.Store.LoadUsable, OwnerOf: b.Store.OwnerOf, MarkDamaged: b.Writer.MarkDamaged, GuestOf: b.guestOf,
		ExistingBox: b.existingBox, KnownIndex: b.Reads.KnownIndex, HashBeneath: b.Writer.HashBeneath}
	if err := useContentStore(b, cfg); err != nil {
		return nil, err
	}
	return b, nil
}
