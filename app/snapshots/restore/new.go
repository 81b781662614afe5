package restore

import (
	"errors"
	"log/slog"
	"time"

	"github.com/boxsnap/boxsnap/app/operations"
	"github.com/boxsnap/boxsnap/app/snapshots"
)

// New makes the restores on the core k and registers their kinds of
// operation with its engine, before River's workers start.
func New(k kernel, opts Options) (*Restores, error) {
	if opts.Deletes == nil || k == nil || opts.Store == nil || opts.Taker == nil || opts.Templates == nil {
		return nil, errors.New("restore: the core, a store, a taker, the templates and the deletes are required")
	}
	s := &Restores{k: k, del: opts.Deletes, st: opts.Store, ops: k.Engine(), install: k.Install(), boxes: opts.Templates,
		now: opts.Now, logger: opts.Logger}
	if s.now == nil {
		s.now = time.Now
	}
	s.taker = &undoTaker{undoKernel: opts.Taker, st: opts.Store, install: s.install, now: s.now}
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	s.resets = &Resets{r: s, k: k, taker: s.taker, st: s.st, ops: s.ops, install: s.install, logger: s.logger, boxes: s.boxes}
	s.kinds = Kinds{
		Restore: operations.Register(s.ops, snapshots.OpRestore, s.runRestore),
		Reset:   operations.Register(s.ops, snapshots.OpReset, s.resets.runReset),
	}
	return s, nil
}
