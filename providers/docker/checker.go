package docker

import (
	"context"
	"fmt"

	"github.com/boxsnap/boxsnap/providers/docker/changerecord"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/mount"
	"github.com/moby/moby/client"
)

// scanChecked scans a box's volume in its checker, made (again, where the
// engine lost it or stopped it) when the scan cannot run in it.
func (b incremental) scanChecked(ctx context.Context, vol string) (changerecord.VolumeState, error) {
	out, err := (&volumeTake{b: b.Backend, id: checkerName(vol)}).exec(ctx, changerecord.ScanScript("/from"))
	if err != nil {
		if err := b.startChecker(ctx, vol); err != nil {
			return nil, err
		}
		if out, err = (&volumeTake{b: b.Backend, id: checkerName(vol)}).exec(ctx, changerecord.ScanScript("/from")); err != nil {
			return nil, fmt.Errorf("scan the volume: %w", err)
		}
	}
	st, _, err := changerecord.ParseScan(out)
	return st, err
}

// startChecker makes and starts a volume's checker, in place of any left.
func (b incremental) startChecker(ctx context.Context, vol string) error {
	if err := b.ensureCopier(ctx); err != nil {
		return err
	}
	name := checkerName(vol)
	b.forceRemove(ctx, name)
	cctx, cancel := short(ctx)
	defer cancel()
	res, err := b.c.ContainerCreate(cctx, client.ContainerCreateOptions{Name: name, Image: copierImage,
		Config: &container.Config{Cmd: idleCmd, Labels: map[string]string{labelInstall: b.cfg.Install, labelRole: roleCopier, labelVolume: vol}},
		HostConfig: &container.HostConfig{Mounts: []mount.Mount{{Type: mount.TypeVolume, Source: vol, Target: "/from", ReadOnly: true}},
			NetworkMode: "none", SecurityOpt: []string{"no-new-privileges"}}})
	if err != nil {
		return wrap(err, "make the volume's checker")
	}
	if _, err := b.c.ContainerStart(cctx, res.ID, client.ContainerStartOptions{}); err != nil {
		b.forceRemove(ctx, res.ID)
		return wrap(err, "start the volume's checker")
	}
	return nil
}
