package local

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/local/capture"
)

// PlanSnapshots reads the box's folder and the store's file system, changing
// nothing, and says what a take, a restore to snap, a keep and a fork would
// do now. Times come from the rates measured by earlier takes.
func (b *Backend) PlanSnapshots(ctx context.Context, guest providers.Guest, snap *providers.SnapshotRef) (providers.SnapshotPlan, error) {
	var plan providers.SnapshotPlan
	dir, err := b.existingBox(guest)
	if err != nil {
		return plan, fmt.Errorf("plan snapshots: %w", err)
	}
	storage, err := b.Capturer.Storage()
	if err != nil {
		return plan, fmt.Errorf("plan snapshots: %w", err)
	}
	plan.Storage = storage
	st, err := b.ReadState(guest.Ref)
	if err != nil {
		return plan, fmt.Errorf("plan snapshots: %w", err)
	}
	prev := b.StatIndex(st)
	files, total, changed, err := b.ScanChanges(ctx, dir, prev)
	if err != nil {
		return plan, fmt.Errorf("plan snapshots: read box %s: %w", guest.Ref, err)
	}
	plan.Size = &providers.BoxSize{DiskBytes: total}
	r := b.ReadRates()
	about := r.Estimate(files, changed)
	running, err := b.running(guest.Ref)
	if err != nil {
		return plan, fmt.Errorf("plan snapshots: %w", err)
	}
	reset := readResetVersion(dir)
	adds := changed
	plan.Take = providers.TakePlan{OK: true, About: about, AddsBytes: &adds, ResetVersion: reset}
	if running {
		plan.Take.PauseAbout = about
	}
	if reset == 0 {
		plan.Take.ForkSafeWhy = providers.NoResetWords(guest.Ref)
	}
	if changed > storage.FreeBytes {
		plan.Take.OK = false
		plan.Take.TryAgain = true
		plan.Take.Why = providers.StoreFullWords(storage.FreeBytes, changed)
	}
	undoBytes := changed
	plan.Restore = providers.RestorePlan{
		Way:               providers.WayRollback,
		Undo:              providers.UndoSnapshot,
		UndoAbout:         about,
		UndoBytes:         &undoBytes,
		Order:             restoreOrder(),
		Excludes:          capture.Excludes,
		RestartsProcesses: st.Command != "",
	}
	var noTime time.Duration
	plan.Keep = providers.KeepPlan{Way: providers.KeepsAsIs, About: &noTime}
	plan.Fork = providers.ForkPlan{OK: reset > 0, About: r.Estimate(files, total), Bytes: &total, Shared: b.shares.share(b), EachBytes: forkEachBytes(b, st.Limits)}
	if reset == 0 {
		plan.Fork.Why = plan.Take.ForkSafeWhy
	}
	if snap == nil {
		return plan, nil
	}

	m, err := b.Store.LoadUsable(*snap)
	if err != nil {
		why := "This snapshot cannot be restored or forked: " + err.Error()
		if errors.Is(err, providers.ErrNotFound) {
			why = "This snapshot is no longer held"
		}
		plan.Restore.Way = providers.WayNone
		plan.Restore.Why = why
		plan.Fork = providers.ForkPlan{OK: false, Why: why}
		plan.Keep.Why = why
		return plan, nil
	}
	plan.Restore.SizeBack = &providers.BoxSize{DiskBytes: m.Bytes}
	if owner := b.Store.OwnerOf(m); owner != guest.Ref {
		plan.Restore.Way = providers.WayNone
		plan.Restore.Why = fmt.Sprintf("This snapshot is of box %s: fork it instead", owner)
	}
	mb := m.Bytes
	plan.Fork = providers.ForkPlan{OK: m.ResetVersion > 0, About: r.Estimate(len(m.Entries), m.Bytes), Bytes: &mb, Shared: b.shares.share(b), EachBytes: forkEachBytes(b, st.Limits)}
	if m.ResetVersion == 0 {
		plan.Fork.Why = providers.NoResetWords(m.Guest.Ref)
	}
	return plan, nil
}

// restoreOrder is the local backend's capture order: the box keeps running
// while the core takes the undo (its process group paused for the take), then
// it stops, its folder is put back, and it starts.
func restoreOrder() []providers.RestoreStep {
	return []providers.RestoreStep{
		providers.StepUndo, providers.StepStop, providers.StepRollback, providers.StepStart, providers.StepReadSize,
	}
}
