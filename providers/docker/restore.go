package docker

import (
	"context"
	"fmt"

	"github.com/boxsnap/boxsnap/providers"
)

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
	if err := b.fillFromSnapshot(ctx, ref.Ref, vol); err != nil {
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
