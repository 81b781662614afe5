package docker

import (
	"context"
	"fmt"
	"time"

	"github.com/moby/moby/client"

	"github.com/boxsnap/boxsnap/providers"
)

// restoreOrder is Docker's capture order: the undo is a snapshot of the
// running box, then the old container stops, the new one is made (rollback)
// from the snapshot's image and a copy of its volume, then started under the
// box's name, the old one deleted once the new one runs.
var restoreOrder = []providers.RestoreStep{providers.StepUndo, providers.StepStop, providers.StepRollback, providers.StepStart, providers.StepReadSize}

// stopGraceSeconds is how long the old container's processes get to stop.
const stopGraceSeconds = 1

// RestoreSnapshot runs one step of a swap. Each step can run again after a
// kill: it reads what the one before it left (the container named -next is
// the new one until the swap, -prev the old one after it).
func (b *Backend) RestoreSnapshot(ctx context.Context, g providers.Guest, ref providers.SnapshotRef, step providers.RestoreStep, _ providers.Recorder) (providers.RestoreProgress, error) {
	p := providers.RestoreProgress{Step: step}
	switch step {
	case providers.StepStop:
		st, err := b.Status(ctx, g)
		if err != nil {
			return p, err
		}
		if err := b.stopContainer(ctx, g.Ref, stopGraceSeconds); err != nil {
			return p, err
		}
		p.Ended = st.Running
		p.Note = "the old container stopped"
	case providers.StepRollback:
		if err := b.makeNext(ctx, g, ref); err != nil {
			return p, err
		}
		p.Note = fmt.Sprintf("a new container made from %s and a copy of its volume", snapImage(ref.Ref))
	case providers.StepStart:
		note, err := b.swap(ctx, g)
		if err != nil {
			return p, err
		}
		p.Note = note
	case providers.StepReadSize:
		st, err := b.Status(ctx, g)
		if err != nil {
			return p, err
		}
		if !st.Exists {
			return p, fmt.Errorf("the container %s: %w", g.Ref, providers.ErrNotFound)
		}
		p.Size = st.Size
	default:
		return p, fmt.Errorf("the Docker backend has no restore step %q: %w", step, providers.ErrUnsupported)
	}
	p.Done = true
	b.hook("restore:" + string(step))
	return p, nil
}

// makeNext makes the box's new container, stopped, under its -next name.
func (b *Backend) makeNext(ctx context.Context, g providers.Guest, ref providers.SnapshotRef) error {
	if err := b.snapshotWhole(ctx, ref.Ref); err != nil {
		return err
	}
	// A -next an earlier try left goes, with its volume, and so does any
	// volume of the box that no container uses (a try killed between the
	// volume and the container).
	if err := b.removeContainer(ctx, nextName(g.Ref)); err != nil {
		return err
	}
	old, ok, err := b.inspect(ctx, g.Ref)
	if err != nil {
		return err
	}
	if !ok {
		if old, ok, err = b.inspect(ctx, prevName(g.Ref)); err != nil {
			return err
		}
	}
	box := ""
	if ok && old.Config != nil {
		box = old.Config.Labels[labelBox]
	}
	if box == "" {
		img, err := b.c.ImageInspect(ctx, snapImage(ref.Ref))
		if err != nil {
			return wrap(err, "read the snapshot's image")
		}
		if img.Config != nil {
			box = img.Config.Labels[labelBox]
		}
	}
	if err := b.removeUnusedVolumes(ctx, box); err != nil {
		return err
	}
	vol, err := b.newVolume(ctx, box)
	if err != nil {
		return err
	}
	if err := b.copyVolume(ctx, snapVolume(ref.Ref), vol); err != nil {
		_ = b.removeVolume(context.WithoutCancel(ctx), vol)
		return fmt.Errorf("copy the snapshot's volume: %w", err)
	}
	// Same box: its identity value passes on.
	s := boxSettings{Image: snapImage(ref.Ref), Identity: box, Volume: vol}
	if ok {
		if id := identityOf(old); id != "" {
			s.Identity = id
		}
		s.From = &old
	}
	if err := b.createBox(ctx, nextName(g.Ref), box, s); err != nil {
		_ = b.removeVolume(context.WithoutCancel(ctx), vol)
		return err
	}
	return nil
}

// removeUnusedVolumes removes the box's own volumes that no container uses.
func (b *Backend) removeUnusedVolumes(ctx context.Context, box string) error {
	if box == "" {
		return nil
	}
	cctx, cancel := short(ctx)
	defer cancel()
	f := client.Filters{}.Add("label", labelInstall+"="+b.cfg.Install, labelBox+"="+box, labelRole+"="+roleBox).Add("dangling", "true")
	vols, err := b.c.VolumeList(cctx, client.VolumeListOptions{Filters: f})
	if err != nil {
		return wrap(err, "list the box's volumes")
	}
	for _, v := range vols.Items {
		if err := b.removeVolume(ctx, v.Name); err != nil {
			return err
		}
	}
	return nil
}

// swap starts the new container under the box's name and deletes the old
// one once the new one runs.
func (b *Backend) swap(ctx context.Context, g providers.Guest) (string, error) {
	next, haveNext, err := b.inspect(ctx, nextName(g.Ref))
	if err != nil {
		return "", err
	}
	note := "the box started"
	if haveNext {
		_, haveOld, err := b.inspect(ctx, g.Ref)
		if err != nil {
			return "", err
		}
		if haveOld {
			if err := b.stopContainer(ctx, g.Ref, stopGraceSeconds); err != nil {
				return "", err
			}
			if err := b.removeContainer(ctx, prevName(g.Ref)); err != nil {
				return "", err
			}
			if err := b.rename(ctx, g.Ref, prevName(g.Ref)); err != nil {
				return "", err
			}
			b.hook("restore:renamed-old")
		}
		if err := b.rename(ctx, next.ID, g.Ref); err != nil {
			return "", err
		}
		note = "the new container started under the box's name; the old one deleted"
	}
	if err := b.Start(ctx, g); err != nil {
		return "", err
	}
	b.hook("restore:started")
	if err := b.removeContainer(ctx, prevName(g.Ref)); err != nil {
		return "", err
	}
	return note, nil
}

func (b *Backend) rename(ctx context.Context, from, to string) error {
	cctx, cancel := short(ctx)
	defer cancel()
	_, err := b.c.ContainerRename(cctx, from, client.ContainerRenameOptions{NewName: to})
	return wrap(err, "rename "+from+" to "+to)
}

func timeSeconds(n int) time.Duration { return time.Duration(n) * time.Second }
