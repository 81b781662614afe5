package boot

import (
	"log/slog"

	"github.com/boxsnap/boxsnap/app/config"
	"github.com/boxsnap/boxsnap/app/pictures"
	"github.com/boxsnap/boxsnap/app/snapshots/approvals"
	"github.com/boxsnap/boxsnap/app/snapshots/boxes"
	"github.com/boxsnap/boxsnap/app/snapshots/boxview"
	"github.com/boxsnap/boxsnap/app/snapshots/contents"
	"github.com/boxsnap/boxsnap/app/snapshots/fork"
	"github.com/boxsnap/boxsnap/app/snapshots/heads"
	"github.com/boxsnap/boxsnap/app/snapshots/hosts"
	"github.com/boxsnap/boxsnap/app/snapshots/keep"
	"github.com/boxsnap/boxsnap/app/snapshots/restore"
	coreseams "github.com/boxsnap/boxsnap/app/snapshots/seams"
	"github.com/boxsnap/boxsnap/app/snapshots/sweeps"
	"github.com/boxsnap/boxsnap/app/snapshots/take"
)

// seams are the packages the kernel's work is split into, each wired to
// the small interfaces the others declare.
type seams struct {
	keeps     *keep.Keeps
	boxes     *boxes.Boxes
	take      *take.Take
	restores  *restore.Restores
	forks     *fork.Forks
	sweeps    *sweeps.Sweeps
	contents  *contents.Contents
	approvals *approvals.Approvals
	pictures  *pictures.Pictures
	heads     *heads.Heads
	boxViews  *boxview.Views
	hosts     *hosts.Hosts
}

// newSeams makes every seam over the kernel and wires each to the others
// (package seams, the wiring's one home). Each registers its kinds of
// operation with the kernel's engine there, before River's workers start.
func newSeams(cfg config.Config, b *base, logger *slog.Logger) (*seams, error) {
	s, err := coreseams.New(b.core, coreseams.Options{Store: b.st, Logger: logger, TempDir: b.tmp, ForkMaxCount: cfg.ForkMaxCount,
		RetryKeysKeptFor: cfg.RetryKeysKeptFor, Host: cfg.Host})
	if err != nil {
		return nil, err
	}
	return &seams{keeps: s.Keeps, boxes: s.Boxes, take: s.Take, restores: s.Restores, forks: s.Forks, sweeps: s.Sweeps,
		contents: s.Contents, approvals: s.Approvals, pictures: s.Pictures, heads: s.Heads,
		boxViews: s.BoxViews, hosts: s.Hosts}, nil
}
