package docker

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/moby/moby/api/types/mount"
	"github.com/moby/moby/client"

	"github.com/boxsnap/boxsnap/providers"
)

// Rates of a plan's times (a take pauses the box about 15 s for 1 GiB
// changed): a time is a fixed part plus a rate times what the box holds.
const (
	// TakeFixed is a take of a box that holds little: a pause, a commit
	// and a copier container (measured here: 0.6 to 1 s).
	TakeFixed = time.Second
	// CopyPerGiB is the copy of a GiB of the volume, and the commit of a GiB
	// of the container's layer.
	CopyPerGiB = 15 * time.Second
	// StopAbout is the old container's stop in a swap.
	StopAbout = stopGraceSeconds * time.Second
	gib       = 1 << 30
)

// KeepOffWhy is why Keep is off on a host whose boxes go with it (as on
// Hetzner and Namespace): nothing of a box outlives its host.
const KeepOffWhy = "this Docker host goes with its boxes (Hetzner deletes a host with no boxes, and Namespace an instance at release), so a snapshot cannot outlive its box here"

// RestoreLeavesOut is what a restore loses that its undo does not hold, in
// Docker's words (the undo is taken while the box runs): the dialog says "It
// leaves out …".
const RestoreLeavesOut = "what the box writes between its undo and the old container's stop, about a second"

// Snapshotting is what Docker offers (a paused commit, disk only, restore as
// a swap, Keep as-is), with no call to the engine.
func (b *Backend) Snapshotting(kind string) *providers.Snapshotting {
	if kind != KindLinux {
		return nil
	}
	s := &providers.Snapshotting{Scope: providers.ScopeBox, Holds: []providers.Holds{providers.HoldsDisk},
		WhileRunning: providers.WhileRunningPauses, Restore: providers.RestoreNewGuest, Fork: providers.ForkCopy,
		KeepsPastRelease: providers.KeepsAsIs, Lives: providers.LivesHost}
	if b.cfg.BoxesGoWithHost {
		s.KeepsPastRelease = providers.KeepsNo
	}
	return s
}

// PlanSnapshots reads the box's container, its volume's size and the data
// root's room, and says what each operation would do now.
func (b *Backend) PlanSnapshots(ctx context.Context, g providers.Guest, snap *providers.SnapshotRef) (providers.SnapshotPlan, error) {
	c, err := b.mustInspect(ctx, g)
	if err != nil {
		return providers.SnapshotPlan{}, err
	}
	st, used, err := b.room(ctx, volumeOf(c))
	if err != nil {
		return providers.SnapshotPlan{}, err
	}
	reset, _ := strconv.Atoi(c.Config.Labels[labelReset])
	about := TakeFixed + time.Duration(float64(CopyPerGiB)*float64(used)/gib)
	plan := providers.SnapshotPlan{Storage: st}
	plan.Take = providers.TakePlan{OK: true, About: about, PauseAbout: about, ResetVersion: reset}
	if used > 0 {
		plan.Take.AddsBytes = &used
	}
	if reset == 0 {
		plan.Take.ForkSafeWhy = "its image has no identity reset (no " + labelReset + " label): a fork of it would keep this box's identity"
	}
	if st.FreeBytes > 0 && st.FreeBytes < used {
		plan.Take.OK, plan.Take.TryAgain = false, true
		plan.Take.Why = fmt.Sprintf("the Docker host's data root has %s free; this box's volume holds %s", bytesWords(st.FreeBytes), bytesWords(used))
	}
	if !running(c) {
		plan.Take.PauseAbout = 0
	}
	// With no snapshot named, the way a restore of the box goes.
	plan.Restore = providers.RestorePlan{Way: providers.WayNewGuest, Undo: providers.UndoSnapshot, Order: restoreOrder, RestartsProcesses: true}
	plan.Keep = providers.KeepPlan{Way: providers.KeepsAsIs}
	zero := time.Duration(0)
	plan.Keep.About = &zero
	if b.cfg.BoxesGoWithHost {
		plan.Keep = providers.KeepPlan{Way: providers.KeepsNo, Why: KeepOffWhy}
	}
	plan.Fork = providers.ForkPlan{OK: true, About: about}
	if snap != nil {
		if err := b.snapshotWhole(ctx, snap.Ref); err != nil {
			plan.Restore.Way, plan.Restore.Why = providers.WayNone, "this snapshot is not whole on the Docker host: "+err.Error()
			plan.Fork.OK, plan.Fork.Why = false, plan.Restore.Why
		} else {
			plan.Restore.Way, plan.Restore.Why = providers.WayNewGuest, ""
			plan.Restore.Excludes = RestoreLeavesOut
			plan.Restore.UndoAbout = about
			if used > 0 {
				plan.Restore.UndoBytes = &used
			}
			plan.Keep.Bytes = nil
		}
	}
	return plan, nil
}

// room reads the data root's file system: by statfs where the engine is on
// this host, else by `df` in a copier container on the box's volume (which
// lives in the data root). It also answers what the box's volume holds.
func (b *Backend) room(ctx context.Context, vol string) (providers.Storage, int64, error) {
	cctx, cancel := short(ctx)
	defer cancel()
	info, err := b.c.Info(cctx, client.InfoOptions{})
	if err != nil {
		return providers.Storage{}, 0, wrap(err, "read the engine's info")
	}
	st := providers.Storage{Name: "docker", Type: info.Info.Driver}
	var used int64
	if vol != "" {
		if v, err := b.c.VolumeInspect(cctx, vol, client.VolumeInspectOptions{}); err == nil && b.local() {
			used = duBytes(v.Volume.Mountpoint)
		}
	}
	if b.local() {
		if r, err := providers.ReadRoom(info.Info.DockerRootDir); err == nil && r.Size() > 0 {
			st.FreeBytes, st.PercentFull = r.Free, r.PercentFull()
			return st, used, nil
		}
	}
	if vol == "" {
		return st, used, nil
	}
	out, err := b.runOnce(ctx, []string{"/bin/busybox", "sh", "-c", "/bin/busybox df -Pk /v | /bin/busybox tail -n 1; /bin/busybox du -sk /v"},
		[]mount.Mount{{Type: mount.TypeVolume, Source: vol, Target: "/v", ReadOnly: true}})
	if err != nil {
		return providers.Storage{}, 0, fmt.Errorf("read the data root's room: %w", err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) >= 2 {
		f := strings.Fields(lines[0])
		if len(f) >= 4 {
			total, _ := strconv.ParseInt(f[1], 10, 64)
			avail, _ := strconv.ParseInt(f[3], 10, 64)
			if total > 0 {
				st.FreeBytes = avail * 1024
				st.PercentFull = 100 * float64(total-avail) / float64(total)
			}
		}
		if f := strings.Fields(lines[1]); len(f) > 0 {
			kib, _ := strconv.ParseInt(f[0], 10, 64)
			used = kib * 1024
		}
	}
	return st, used, nil
}

// duBytes is what a folder's files hold, in bytes (as du counts blocks).
func duBytes(dir string) int64 {
	var n int64
	_ = walk(dir, func(fi os.FileInfo) {
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			n += st.Blocks * 512
		}
	})
	return n
}

func walk(dir string, f func(os.FileInfo)) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		fi, err := e.Info()
		if err != nil {
			continue
		}
		f(fi)
		if e.IsDir() {
			_ = walk(dir+"/"+e.Name(), f)
		}
	}
	return nil
}

func bytesWords(n int64) string {
	switch {
	case n >= gib:
		return fmt.Sprintf("%.1f GiB", float64(n)/gib)
	case n >= 1<<20:
		return fmt.Sprintf("%.0f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d KiB", n/1024)
}

// restoreOrder is Docker's capture order: the undo is a snapshot of the
// running box, then the old container stops, the new one is made (rollback)
// from the snapshot's image and a copy of its volume, then started under the
// box's name, the old one deleted once the new one runs.
var restoreOrder = []providers.RestoreStep{providers.StepUndo, providers.StepStop, providers.StepRollback, providers.StepStart, providers.StepReadSize}

// stopGraceSeconds is how long the old container's processes get to stop.
const stopGraceSeconds = 1
