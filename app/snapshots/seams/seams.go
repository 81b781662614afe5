package seams

import (
	"log/slog"
	"os"
	"time"

	"github.com/boxsnap/boxsnap/app/pictures"
	"github.com/boxsnap/boxsnap/app/remote"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/approvals"
	"github.com/boxsnap/boxsnap/app/snapshots/boxes"
	"github.com/boxsnap/boxsnap/app/snapshots/boxview"
	"github.com/boxsnap/boxsnap/app/snapshots/contents"
	"github.com/boxsnap/boxsnap/app/snapshots/fork"
	"github.com/boxsnap/boxsnap/app/snapshots/heads"
	"github.com/boxsnap/boxsnap/app/snapshots/hosts"
	"github.com/boxsnap/boxsnap/app/snapshots/keep"
	"github.com/boxsnap/boxsnap/app/snapshots/restore"
	"github.com/boxsnap/boxsnap/app/snapshots/sweeps"
	"github.com/boxsnap/boxsnap/app/snapshots/take"
	"github.com/boxsnap/boxsnap/app/store"
)

// Seams are the packages the kernel's work is split into, each wired to
// the small interfaces the others declare.
type Seams struct {
	Keeps     *keep.Keeps
	Boxes     *boxes.Boxes
	Take      *take.Take
	Restores  *restore.Restores
	Forks     *fork.Forks
	Sweeps    *sweeps.Sweeps
	Contents  *contents.Contents
	Approvals *approvals.Approvals
	Pictures  *pictures.Pictures
	Heads     *heads.Heads
	BoxViews  *boxview.Views
	Hosts     *hosts.Hosts
}

// Options are what the seams are made of besides the kernel: the store,
// the logger, the clock (nil is time.Now; the kernel's, so the seams'
// times read as its records'), the folder imports are checked in (empty:
// the system's), a redeem's bounds (zero fields are the defaults) and the
// most forks one request makes (0: the fork's default) and how long a
// retry key answers its first call (0: snapshots.ToolAnswersKeptFor).
type Options struct {
	Store            *store.Store
	Logger           *slog.Logger
	Now              func() time.Time
	TempDir          string
	Redeem           contents.RedeemLimits
	ForkMaxCount     int
	RetryKeysKeptFor time.Duration
	// Host is the host this process runs on; empty: the machine's
	// hostname, as the local backend's default.
	Host string
}

// New makes every seam over the kernel core and wires each to the others.
// Each registers its kinds of operation with the kernel's engine here,
// before River's workers start.
func New(core *snapshots.Service, opts Options) (*Seams, error) {
	st, logger, now := opts.Store, opts.Logger, opts.Now
	// The keeps register theirs (Keep, Unkeep, Delete, Expiry), and the
	// boxes, the take, the restores and the sweeps delete through them.
	kp, err := keep.New(core, keep.Options{Store: st, Now: now, Logger: logger})
	if err != nil {
		return nil, err
	}
	tk, err := take.New(core, take.Options{Store: st, Deletes: kp, Now: now, Logger: logger})
	if err != nil {
		return nil, err
	}
	// The boxes register theirs (Release, Untrash); the kernel reads boxes
	// and templates through them. A release's final snapshot, as a
	// restore's or a reset's undo, is the take's.
	undos := undoKernel{Service: core, take: tk}
	bx, err := boxes.New(undos, boxes.Options{Store: st, Deletes: kp, Now: now, Logger: logger})
	if err != nil {
		return nil, err
	}
	core.UseBoxes(bx)
	// The restores register theirs (Restore, Reset); their undos are the
	// take's.
	rs, err := restore.New(core, restore.Options{Store: st, Deletes: kp, Taker: undos, Templates: bx, Now: now, Logger: logger})
	if err != nil {
		return nil, err
	}
	host := opts.Host
	if host == "" {
		host, _ = os.Hostname()
	}
	fk, err := fork.New(core, fork.Options{Store: st, Now: now, Logger: logger, MaxCount: opts.ForkMaxCount, Host: host})
	if err != nil {
		return nil, err
	}
	// A fork of the box now starts from the take's snapshot.
	fk.UseTaker(forkTaker{tk})
	sw, err := sweeps.New(sweeps.Options{Store: st, Kernel: core, Snaps: kp, Taker: tk, Boxes: bx, Straight: rs, Logger: logger, Now: now,
		RetryKeysKeptFor: opts.RetryKeysKeptFor, Host: host})
	if err != nil {
		return nil, err
	}
	// Contents registers its Import operation, and gives a restore's dry
	// run its preview.
	cont, err := contents.New(core, core, contents.Options{Store: st, Now: now, TempDir: opts.TempDir, Redeem: opts.Redeem, FetchShared: remote.FetchShared})
	if err != nil {
		return nil, err
	}
	rs.UseRestorePreview(cont)
	ap, err := approvals.New(core, approvals.Options{Store: st, Engine: core.Engine(), Restores: rs, Now: now, Logger: logger})
	if err != nil {
		return nil, err
	}
	rs.UseApprovals(ap)
	pics, err := pictures.NewPictures(core, pictures.KeepOptions{Store: st, Now: now, Logger: logger})
	if err != nil {
		return nil, err
	}
	core.UsePictures(pics)
	tk.UsePictures(pics)
	rs.UsePictures(pics)
	hd, err := heads.New(core, core, heads.Options{Store: st})
	if err != nil {
		return nil, err
	}
	// The box page's read model reads through the kernel alone.
	bv := boxview.New(core, boxview.Options{Store: st, Logger: logger})
	// The hosts carry a box over to another host as a restore.
	hs, err := hosts.New(core, hosts.Options{Store: st, Host: host, Now: now, Logger: logger})
	if err != nil {
		return nil, err
	}
	hs.UseRestorer(rs)
	hs.UseTemplates(bx)
	// A fork on another host than its source box's carries the source's
	// environment as a move does.
	fk.UseCarrier(hs)
	return &Seams{Keeps: kp, Boxes: bx, Take: tk, Restores: rs, Forks: fk, Sweeps: sw, Contents: cont, Approvals: ap, Pictures: pics, Heads: hd,
		BoxViews: bv, Hosts: hs}, nil
}
