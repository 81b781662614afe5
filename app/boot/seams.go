package boot

import (
	"log/slog"

	"github.com/boxsnap/boxsnap/app/config"
	"github.com/boxsnap/boxsnap/app/pictures"
	"github.com/boxsnap/boxsnap/app/remote"
	"github.com/boxsnap/boxsnap/app/snapshots/approvals"
	"github.com/boxsnap/boxsnap/app/snapshots/boxes"
	"github.com/boxsnap/boxsnap/app/snapshots/contents"
	"github.com/boxsnap/boxsnap/app/snapshots/fork"
	"github.com/boxsnap/boxsnap/app/snapshots/heads"
	"github.com/boxsnap/boxsnap/app/snapshots/keep"
	"github.com/boxsnap/boxsnap/app/snapshots/restore"
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
}

// newSeams makes every seam over the kernel and wires each to the others.
// Each registers its kinds of operation with the kernel's engine here,
// before River's workers start.
func newSeams(cfg config.Config, b *base, logger *slog.Logger) (*seams, error) {
	core, st, tmp := b.core, b.st, b.tmp
	// The sweeps register their kinds of operation with the core's engine,
	// before its workers start.
	// The keeps register theirs (Keep, Unkeep, Delete, Expiry), and the
	// boxes, the take, the restores and the sweeps delete through them.
	kp, err := keep.New(core, keep.Options{Store: st, Logger: logger})
	if err != nil {
		return nil, err
	}
	// The boxes register their kinds of operation (Release, Untrash) with
	// the core's engine, before its workers start; the kernel reads boxes
	// and templates through them.
	bx, err := boxes.New(core, boxes.Options{Store: st, Deletes: kp, Logger: logger})
	if err != nil {
		return nil, err
	}
	core.UseBoxes(bx)
	// The take registers its kind of operation with the core's engine,
	// before its workers start.
	tk, err := take.New(core, take.Options{Store: st, Deletes: kp, Logger: logger})
	if err != nil {
		return nil, err
	}
	// The restores register their kinds of operation (Restore, Reset) with
	// the core's engine, before its workers start; their undos are the
	// core's takes.
	rs, err := restore.New(core, restore.Options{Store: st, Deletes: kp, Taker: core, Templates: bx, Logger: logger})
	if err != nil {
		return nil, err
	}
	// The fork registers its kind of operation with the core's engine,
	// before its workers start.
	fk, err := fork.New(core, fork.Options{Store: st, Logger: logger, MaxCount: cfg.ForkMaxCount})
	if err != nil {
		return nil, err
	}
	sw, err := sweeps.New(sweeps.Options{Store: st, Kernel: core, Snaps: kp, Taker: tk, Boxes: bx, Straight: rs, Logger: logger})
	if err != nil {
		return nil, err
	}
	// Contents registers its Import operation with the core's engine before
	// River's workers start, and gives a restore's dry run its preview.
	cont, err := contents.New(core, core, contents.Options{Store: st, TempDir: tmp, FetchShared: remote.FetchShared})
	if err != nil {
		return nil, err
	}
	rs.UseRestorePreview(cont)
	ap, err := approvals.New(core, approvals.Options{Store: st, Engine: core.Engine(), Restores: rs, Logger: logger})
	if err != nil {
		return nil, err
	}
	rs.UseApprovals(ap)
	pics, err := pictures.NewPictures(core, pictures.KeepOptions{Store: st, Logger: logger})
	if err != nil {
		return nil, err
	}
	core.UsePictures(pics)
	tk.UsePictures(pics)
	hd, err := heads.New(core, core, heads.Options{Store: st})
	if err != nil {
		return nil, err
	}
	rs.UsePictures(pics)
	return &seams{keeps: kp, boxes: bx, take: tk, restores: rs, forks: fk, sweeps: sw, contents: cont, approvals: ap, pictures: pics, heads: hd}, nil
}
