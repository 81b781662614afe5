package plans

import (
	"context"
	"time"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/restore"
	"github.com/boxsnap/boxsnap/providers"
)

// Plans answers the dry runs of the calls that delete or overwrite. A nil
// *Plans answers each with an error (errNoPlans) instead of a panic.
type Plans struct {
	k   kernel
	r   restores
	z   resets
	b   releases
	now func() time.Time
}

// kernel is what the plans need of the snapshot core: the records as the
// caller may see them, the pins the snapshot lists carry, the time zone,
// the backends and their plans, and the core's own checks of a reset and a
// restore. *snapshots.Service is one.
type kernel interface {
	SnapshotOfBox(ctx context.Context, c snapshots.Caller, boxRef, ref string) (*snapshots.Snapshot, *snapshots.Box, error)
	Box(ctx context.Context, c snapshots.Caller, ref string) (*snapshots.Box, error)
	List(ctx context.Context, c snapshots.Caller, q snapshots.ListQuery) ([]snapshots.BoxSnapshots, error)
	TimeZone(ctx context.Context) *time.Location
	BackendOf(b *snapshots.Box) (snapshots.Backend, bool)
	PlanNow(ctx context.Context, b *snapshots.Box, be snapshots.Backend, ref *providers.SnapshotRef) (providers.SnapshotPlan, error)
	Settings(ctx context.Context) (snapshots.Settings, error)
}

// restores is what a restore's dry run asks of package restore's
// Restores: the guard and the restore's own checks.
type restores interface {
	Guard(ctx context.Context, c snapshots.Caller, b *snapshots.Box) []string
	RestoreDryRun(ctx context.Context, c snapshots.Caller, req snapshots.RestoreRequest) (*restore.RestoreDry, error)
}

// resets is what a reset's and an undo's dry runs ask of package restore's
// Resets: the reset's checks, what it would make, and the undo it would
// go back to.
type resets interface {
	PreviewReset(ctx context.Context, c snapshots.Caller, boxRef, template string) (*restore.ResetPreview, error)
	ResetCheck(ctx context.Context, c snapshots.Caller, req restore.ResetRequest) error
	NewestUndoID(ctx context.Context, c snapshots.Caller, boxRef string) (string, error)
}

// releases is what a release's and an emptying of the trash's dry runs
// ask of package boxes' ReleaseChecks: the real calls' own checks, and the
// release dialog's words on the trash.
type releases interface {
	Release(ctx context.Context, c snapshots.Caller, ref string, deleteKept bool) error
	EmptyTrash(ctx context.Context, c snapshots.Caller, ref string) error
	ReleaseWords(ctx context.Context, b *snapshots.Box) (string, error)
}

// New makes the plans of the core k, whose restores and resets r and z
// check what a restore, a reset and an undo would do; now is the clock
// (nil is time.Now).
func New(k kernel, r restores, z resets, now func() time.Time) *Plans {
	if now == nil {
		now = time.Now
	}
	return &Plans{k: k, r: r, z: z, now: now}
}
