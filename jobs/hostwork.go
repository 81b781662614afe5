package jobs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/boxsnap/boxsnap/app/operations"
	"github.com/boxsnap/boxsnap/app/snapshots/hosts"
)

// Work that reads a host's own disk runs on that host: River's leader
// enqueues each periodic job once, on any process, so the "hosts" sweep
// (run anywhere) puts a "host-work" run on the queue of each host whose
// workers are alive (operations.HostQueue), which only that host's
// workers take: a host seen through its web process alone gets none. A
// host's own work ships its snapshots from before the content store and
// releases the copies it holds of boxes moved to another host.

// hostSweeps are the fan-out onto the live hosts, every so often, and each
// host's own work, when the hosts are known.
func hostSweeps(d Deps, every time.Duration) []sweep {
	if d.Hosts == nil {
		return nil
	}
	return []sweep{
		{name: "hosts", every: every, run: fanOut},
		{name: hostWork, onHost: true, run: func(ctx context.Context, d Deps) error {
			shipped, left, err := d.Hosts.Backfill(ctx)
			if shipped > 0 || left > 0 {
				d.Logger.Info("snapshots from before the content store shipped", "host", d.Hosts.This(), "shipped", shipped, "left", left)
			}
			return errors.Join(err, ReleaseLeft(ctx, d.Hosts, d.Logger))
		}},
	}
}

// hostWork names a host's own run of work.
const hostWork = "host-work"

// fanOut puts a host-work run on each live host's queue: one queued or
// running per host at a time.
func fanOut(ctx context.Context, d Deps) error {
	return queueOnHosts(ctx, d, hostWork, true)
}

// fanOutSweep puts a run of the sweep name on the queue of each live host
// but this one, which runs it itself: a sweep over the boxes each host
// owns (sweep.fan), such as automatic history's check.
func fanOutSweep(ctx context.Context, d Deps, name string) error {
	if d.Hosts == nil {
		return nil
	}
	return queueOnHosts(ctx, d, name, false)
}

// queueOnHosts puts a run of the sweep name on each live host's queue,
// this host's too when self: one queued or running per host at a time.
func queueOnHosts(ctx context.Context, d Deps, name string, self bool) error {
	client, err := river.ClientFromContextSafely[pgx.Tx](ctx)
	if err != nil {
		return fmt.Errorf("queue %s on the hosts: %w", name, err)
	}
	alive, err := d.Hosts.Working(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for _, h := range alive {
		if h == d.Hosts.This() && !self {
			continue
		}
		if _, err := client.Insert(ctx, SweepArgs{Name: name, Host: h}, HostWorkOpts(h)); err != nil {
			errs = append(errs, fmt.Errorf("queue %s on host %s: %w", name, h, err))
		}
	}
	return errors.Join(errs...)
}

// HostWorkArgs is host's own run of work.
func HostWorkArgs(host string) SweepArgs { return SweepArgs{Name: hostWork, Host: host} }

// HostWorkOpts puts a host's run of a sweep on its own queue, one queued
// or running at a time.
func HostWorkOpts(host string) *river.InsertOpts {
	o := SweepArgs{}.InsertOpts()
	o.Queue = operations.HostQueue(host)
	return &o
}

// ReleaseLeft releases the copies this host holds of boxes another host
// owns (hosts.Hosts.ReleaseLeft), keeps found those of boxes released
// elsewhere, and logs how many: a host's own work runs it, and a working
// process at its start, before it starts its boxes' processes again.
func ReleaseLeft(ctx context.Context, h *hosts.Hosts, logger *slog.Logger) error {
	if h == nil {
		return nil
	}
	rep, err := h.ReleaseLeft(ctx)
	if len(rep.Released) > 0 || rep.Busy > 0 {
		logger.Info("released the copies of boxes another host owns", "host", h.This(), "released", len(rep.Released), "boxes", rep.Released, "busy", rep.Busy)
	}
	if len(rep.Found) > 0 {
		logger.Warn("kept, found, the copies of boxes released on another host", "host", h.This(), "found", len(rep.Found), "boxes", rep.Found)
	}
	return err
}
