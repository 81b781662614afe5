package contents

import (
	"errors"
	"time"

	"github.com/boxsnap/boxsnap/app/operations"
	"github.com/boxsnap/boxsnap/app/snapshots"
)

// New makes Contents on the kernel k and the snapshot operations snaps
// (both the core's *snapshots.Service), and registers its Import operation
// with the kernel's engine.
func New(k kernel, snaps snapshotOps, opts Options) (*Contents, error) {
	if k == nil || snaps == nil || opts.Store == nil {
		return nil, errors.New("contents: the kernel, the snapshot operations and a store are required")
	}
	s := &Contents{k: k, snaps: snaps, st: opts.Store, install: k.Install(), now: opts.Now,
		tempDir: opts.TempDir, redeem: opts.Redeem.orDefault(), fetchShared: opts.FetchShared}
	if s.now == nil {
		s.now = time.Now
	}
	// ImportResultOf reads an import's result through its typed kind.
	s.importKind = operations.Register(k.Engine(), snapshots.OpImport, s.runImport)
	return s, nil
}
