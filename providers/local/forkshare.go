package local

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/local/diskimage"
	"github.com/boxsnap/boxsnap/providers/local/disks"
	"github.com/boxsnap/boxsnap/providers/local/overlay"
	"github.com/boxsnap/boxsnap/providers/local/store"
)

// forkShares says whether a fork here lies over its snapshot's shared
// tree (package overlay) or copies it: probed once, at the first fork.
type forkShares struct {
	once     sync.Once
	probed   atomic.Bool
	why, fix string // why forks copy here, and the fix; "" when they share
}

// offers says whether forks here share their snapshot's files, as the
// backend's Snapshotting says, without touching the data folder: the
// probe's answer once a fork has run it, and before that whether boxes
// have disks of their own and the kernel lists the overlay file system.
func (s *forkShares) offers(b *Backend) bool {
	if s.probed.Load() {
		return s.why == ""
	}
	exact, _, _ := b.DiskBounding()
	return exact && overlay.Known()
}

// share says whether a fork's box can be an overlay over its snapshot's
// shared tree here: its disk a file system of its own (the upper layer is
// in it), and the overlay probed once (overlay.Probe). The log says which
// at the first fork.
func (s *forkShares) share(b *Backend) bool {
	s.once.Do(func() {
		if exact, why, fix := b.DiskBounding(); !exact {
			s.why, s.fix = "a box's disk is not a file system of its own here ("+why+"), and its overlay's upper layer is kept in one", fix
		} else {
			s.why, s.fix = overlay.Probe(b.root)
		}
		if s.why == "" {
			b.log.Info("local backend: forks of one snapshot share its files, each fork's box an overlay over one read-only tree of them")
		} else {
			b.log.Warn("local backend: each fork copies its snapshot's files, because "+s.why, "fix", s.fix)
		}
		s.probed.Store(true)
	})
	return s.why == ""
}

// forkFolder makes the folder a fork of m is made in, under a temporary
// name (disks.ForkFolder): where forks share, its box an overlay over
// m's shared tree, made once for every fork of m, and lower names m;
// elsewhere, or where the overlay fails, an empty folder the fork's files
// are copied into, and lower is "".
func forkFolder(ctx context.Context, b *Backend, m *store.Manifest, box string, bound int64) (tmp, tmpImg string, image bool, lower string, err error) {
	if b.shares.share(b) {
		tmp, tmpImg, err = sharedFork(ctx, b, m, box, bound)
		if err == nil {
			return tmp, tmpImg, true, m.ID, nil
		}
		if refused := (*providers.RefusedError)(nil); errors.As(err, &refused) || ctx.Err() != nil {
			return "", "", false, "", err
		}
		b.log.Warn("local backend: a fork could not lie over its snapshot's shared files, so it copies them", "snapshot", m.ID, "err", err)
	}
	tmp, tmpImg, image, err = b.ForkFolder(ctx, m, box, bound)
	return tmp, tmpImg, image, "", err
}

// sharedFork makes a fork's box under a temporary name as an overlay over
// m's shared tree (written first if no fork of m made it): its own image
// holds the overlay's upper layer, what the fork writes. On failure
// nothing of the fork is left; the shared tree stays for a sweep.
func sharedFork(ctx context.Context, b *Backend, m *store.Manifest, box string, bound int64) (string, string, error) {
	suffix := store.RandomSuffix()
	tmp := b.Path(store.DirBoxes, ".fork-"+box+"-"+suffix)
	tmpImg := b.Path(disks.DirDisks, ".fork-"+box+"-"+suffix+".img")
	image, err := b.MakeBoxFolder(ctx, tmp, tmpImg, bound)
	if err != nil {
		return "", "", fmt.Errorf("fork: %w", err)
	}
	if !image {
		_ = b.RemoveBoxFolder(tmp, tmpImg)
		return "", "", errors.New("fork: the box got no file system of its own")
	}
	lowers := &overlay.Lowers{Store: b.Store}
	tree, err := lowers.Ensure(ctx, m.ID, func(ctx context.Context, dir string) error {
		if err := writeTree(ctx, b, dir, m); err != nil {
			return err
		}
		// On disk before its rename publishes it, as a snapshot is.
		return syncWritten(b, dir)
	})
	var rel string
	if err == nil {
		rel, err = filepath.Rel(filepath.Dir(tmpImg), tree)
	}
	if err == nil {
		var unlock func()
		if unlock, err = b.LockMounts(); err == nil {
			err = diskimage.OverlayOn(tmpImg, tmp, rel)
			unlock()
		}
	}
	if err != nil {
		_ = b.RemoveBoxFolder(tmp, tmpImg)
		return "", "", fmt.Errorf("fork: %w", err)
	}
	return tmp, tmpImg, nil
}

// overlayUpper is the upper layer of the overlay mounted on a fork's
// folder dir, what the box alone holds, or "" for a folder that is no
// overlay: the journal and the take tell by it which files lie in the
// shared tree (journal.Lower).
func overlayUpper(dir string) string {
	upper, _ := diskimage.UpperOf(dir)
	return upper
}

// boxSize is the size of the box's files in dir: for a box over a shared
// tree, what it alone holds (its overlay's upper layer) and, apart, the
// shared tree's, so a fork's cost is not counted once per fork.
func boxSize(ctx context.Context, b *Backend, dir string) (providers.BoxSize, error) {
	upper, lower := diskimage.UpperOf(dir)
	if upper == "" {
		n, err := b.TreeSize(ctx, dir)
		return providers.BoxSize{DiskBytes: n}, err
	}
	own, err := b.TreeSize(ctx, upper)
	if err != nil {
		return providers.BoxSize{}, err
	}
	shared, err := b.TreeSize(ctx, lower)
	return providers.BoxSize{DiskBytes: own, SharedBytes: shared}, err
}

// forkEachBytes is what each fork of a box with limits lim takes on the
// host at once besides its files: its own disk image's making, where
// boxes have one (diskimage.UpFront of its bound), else nil.
func forkEachBytes(b *Backend, lim providers.BoxLimits) *int64 {
	if exact, _, _ := b.DiskBounding(); !exact {
		return nil
	}
	n := diskimage.UpFront(diskBound(lim, b.diskBytes))
	return &n
}
