package local

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/local/disks"
	"github.com/boxsnap/boxsnap/providers/local/state"
	"github.com/boxsnap/boxsnap/providers/local/store"
)

// ResetGuest makes a local box fresh again (moatbox's "Reset to a fresh
// box"): its folder is replaced by a new copy of its template folder (an
// empty folder for a box made from none), with its identity marker written
// again. It keeps running as its template says: spec's user, environment
// and limits when spec gives any, else the box's own. Its snapshots stay;
// its state forgets the last take, so the next take walks the new folder.
// The fresh copy is made beside the folder (in a fresh image of the
// bound's size, where loop mounts work) and swapped into place, so the box
// is never half one and half the other.
func (b *Backend) ResetGuest(ctx context.Context, g providers.Guest, spec providers.BoxSpec) error {
	dir, err := b.existingBox(g)
	if err != nil {
		return err
	}
	if err := b.Stop(ctx, g); err != nil && !errors.Is(err, providers.ErrNotFound) {
		return fmt.Errorf("reset box %s: %w", g.Ref, err)
	}
	cur, err := b.ReadState(g.Ref)
	if err != nil {
		return fmt.Errorf("reset box %s: %w", g.Ref, err)
	}
	limits := cur.Limits
	if spec.User != "" || spec.Env != nil || spec.Limits != (providers.BoxLimits{}) {
		limits = spec.Limits
	}
	// The fresh box is made beside the old one, in a fresh image of its
	// template's bound where loop mounts work (so a reset also gives a box
	// made before images were a file system of its own, and a template's
	// new bound), then swapped in.
	suffix := store.RandomSuffix()
	fresh := b.Path(store.DirBoxes, ".reset-"+g.Ref+"-"+suffix)
	freshImg := b.Path(disks.DirDisks, ".reset-"+g.Ref+"-"+suffix+".img")
	image, err := b.MakeBoxFolder(ctx, fresh, freshImg, diskBound(limits, b.diskBytes))
	if err != nil {
		return fmt.Errorf("reset box %s: %w", g.Ref, err)
	}
	if spec.Template != "" {
		src, err := b.TemplateDir(spec.Template)
		if err == nil {
			if err = b.CopyTree(ctx, src, fresh); err != nil {
				err = fmt.Errorf("reset box %s from template %s: %w", g.Ref, spec.Template, err)
			}
		}
		if err != nil {
			_ = b.RemoveBoxFolder(fresh, freshImg)
			return err
		}
	}
	if err := writeIdentity(fresh, g.Ref); err != nil {
		_ = b.RemoveBoxFolder(fresh, freshImg)
		return fmt.Errorf("reset box %s: %w", g.Ref, err)
	}
	if image {
		err = b.SwapImage(g.Ref, dir, fresh, freshImg)
	} else {
		err = b.SwapFolder(g.Ref, dir, fresh)
	}
	if err != nil {
		return fmt.Errorf("reset box %s: %w", g.Ref, err)
	}
	err = b.UpdateState(g.Ref, func(st *state.BoxState) {
		st.Last, st.Parent, st.StatCache, st.ForkedFrom, st.Lower = "", "", "", "", ""
		if spec.Command != "" {
			st.Command = spec.Command
		}
		// The template's user, environment and limits, when the spec
		// gives them; else the box keeps its own: a reset never runs it
		// with the defaults in place of its template's bounds.
		if spec.User != "" || spec.Env != nil || spec.Limits != (providers.BoxLimits{}) {
			st.User, st.Env, st.Limits = spec.User, maps.Clone(spec.Env), spec.Limits
		}
	})
	if err != nil {
		return fmt.Errorf("reset box %s: %w", g.Ref, err)
	}
	if err := os.Remove(b.StatCacheFile(g.Ref)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("reset box %s: %w", g.Ref, err)
	}
	return nil
}
