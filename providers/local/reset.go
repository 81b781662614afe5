package local

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/local/disks"
	"github.com/boxsnap/boxsnap/providers/local/store"
)

// ResetGuest makes a local box fresh again (moatbox's "Reset to a fresh
// box"): its folder is replaced by a new copy of its template folder (an
// empty folder for a box made from none), with its identity marker written
// again. It keeps running as its template says: spec's user, environment
// and limits when spec gives any, else the box's own. Its snapshots stay;
// its state forgets the last take, so the next take walks the new folder.
// The fresh copy is made beside the folder (in a fresh image of the
// bound's size, where loop mounts work), put on disk (one syncfs of its
// file system), and swapped into place, so the box is never half one and
// half the other.
//
// A reset killed part-way (SIGKILL, a crash) leaves the box its old self
// or its fresh self, and nothing that is not cleared later. Two locks
// decide that a reset is dead rather than still running in another
// boxsnap process on this data folder:
//
//   - While it makes the fresh box (boxes/.reset-<box>-<suffix>, its image
//     disks/.reset-<box>-<suffix>.img and the mounts of it) a reset holds
//     the store lock shared, as a fork does. The sweep holds it exclusive,
//     so every .reset-* name the sweep finds is a dead reset's, and goes
//     (disks.SweepResets).
//   - The swap and the state's change run under the disks' lock, which
//     every process takes to mount a box. The reset writes its record
//     (state/<box>.reset) under that lock before it first changes the box,
//     and removes it after its last change: a process holding the disks'
//     lock that sees a record sees a dead reset's, and finishes it
//     (finishReset): forward when the fresh box is in place (the box's
//     image, or its folder, is the fresh one by its inode), else back.
//     Every use of the box (existingBox), a start's mounts and the sweep
//     do so first.
//
// Locks were chosen over a lease or the operation's state in the
// database: a flock is gone the moment its process dies, where a lease
// waits out its term and an operation stays running until a live worker
// recovers it; and these locks bind exactly the processes that see these
// names, those on this host's data folder, which the database does not
// know.
func (b *Backend) ResetGuest(ctx context.Context, g providers.Guest, spec providers.BoxSpec) error {
	dir, err := b.existingBox(g)
	if err != nil {
		return err
	}
	r := resets{b}
	if err := b.Stop(ctx, g); err != nil && !errors.Is(err, providers.ErrNotFound) {
		return fmt.Errorf("reset box %s: %w", g.Ref, err)
	}
	cur, err := b.ReadState(g.Ref)
	if err != nil {
		return fmt.Errorf("reset box %s: %w", g.Ref, err)
	}
	rec := resetRecord{Command: spec.Command}
	limits := cur.Limits
	if spec.User != "" || spec.Env != nil || spec.Limits != (providers.BoxLimits{}) {
		rec.SetRun, rec.User, rec.Env, rec.Limits = true, spec.User, spec.Env, spec.Limits
		limits = spec.Limits
	}
	lock, err := b.LockStore(ctx, false)
	if err != nil {
		return fmt.Errorf("reset box %s: %w", g.Ref, err)
	}
	defer lock.Unlock()
	// The fresh box is made beside the old one, in a fresh image of its
	// template's bound where loop mounts work (so a reset also gives a box
	// made before images were a file system of its own, and a template's
	// new bound), then swapped in.
	suffix := store.RandomSuffix()
	rec.Fresh, rec.Old = disks.ResetPrefix+g.Ref+"-"+suffix, disks.ResetPrefix+"old-"+g.Ref+"-"+suffix
	fresh, freshImg := b.Path(store.DirBoxes, rec.Fresh), b.Path(disks.DirDisks, rec.Fresh+".img")
	rec.Image, err = b.MakeBoxFolder(ctx, fresh, freshImg, diskBound(limits, b.diskBytes))
	if err != nil {
		return fmt.Errorf("reset box %s: %w", g.Ref, err)
	}
	r.resetAt("made")
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
	r.resetAt("written")
	// The fresh files are on disk before any name leads to them: a power
	// cut after the swap finds them whole.
	if err := syncWritten(b, fresh); err != nil {
		_ = b.RemoveBoxFolder(fresh, freshImg)
		return fmt.Errorf("reset box %s: %w", g.Ref, err)
	}
	r.resetAt("synced")
	if err := r.swapIn(g.Ref, dir, rec); err != nil {
		return fmt.Errorf("reset box %s: %w", g.Ref, err)
	}
	return nil
}

// resets are the local backend's resets under way and cut short: the
// swap of a fresh box into place, and the record that lets a reset killed
// part-way be finished (ResetGuest says how).
type resets struct{ *Backend }

// resetAt runs the test hook at a reset's step.
func (b resets) resetAt(step string) {
	if b.hooks.resetStep != nil {
		b.hooks.resetStep(step)
	}
}

// swapIn puts the fresh box rec names in place of the box's folder dir
// and changes the box's state as rec says, under the disks' lock and its
// record (ResetGuest says why), then removes the old box. On failure the
// box is as it was and the fresh box is gone.
func (b resets) swapIn(box, dir string, rec resetRecord) error {
	fresh, freshImg := b.Path(store.DirBoxes, rec.Fresh), b.Path(disks.DirDisks, rec.Fresh+".img")
	old, oldImg := b.Path(store.DirBoxes, rec.Old), b.Path(disks.DirDisks, rec.Old+".img")
	img := b.ImageFile(box)
	unlockOnce, err := b.LockMounts()
	if err != nil {
		_ = b.RemoveBoxFolder(fresh, freshImg)
		return err
	}
	var once sync.Once
	unlock := func() { once.Do(unlockOnce) }
	defer unlock()
	if rec.Image {
		err = disks.Unmount(fresh)
		if err == nil {
			err = os.Remove(fresh)
		}
		rec.Ino, err = inodeOf(freshImg, err)
	} else {
		rec.Ino, err = inodeOf(fresh, nil)
	}
	if err == nil {
		err = b.writeResetRecord(box, rec)
	}
	if err != nil {
		b.removeResetLeftLocked(rec)
		return err
	}
	b.resetAt("recorded")
	if err := b.commitReset(box, dir, img, rec, fresh, freshImg, old, oldImg); err != nil {
		// Put the box back as it was: the record says how.
		if ferr := b.finishResetLocked(box); ferr != nil {
			b.log.Error("local backend: a failed reset could not put the box back", "box", box, "err", ferr)
		}
		return err
	}
	if err := b.endReset(box, rec); err != nil {
		return err
	}
	unlock()
	b.resetAt("ended")
	b.removeResetLeft(rec)
	return nil
}

// commitReset swaps the fresh box in. The one change that makes the box
// its fresh self is a rename: the fresh image's over the box's, or the
// fresh folder's exchanged with the box's; what comes before it is undone
// by finishReset, what comes after redone.
func (b resets) commitReset(box, dir, img string, rec resetRecord, fresh, freshImg, old, oldImg string) error {
	hadImage := b.HasImage(box)
	if !rec.Image {
		if hadImage {
			// A box with a file system of its own, on a host where loop
			// mounts stopped working: it gets a plain folder.
			if err := disks.Unmount(dir); err != nil {
				return err
			}
			if err := os.Rename(img, oldImg); err != nil {
				return err
			}
			b.resetAt("old moved")
		}
		if err := exchange(fresh, dir); err != nil {
			return err
		}
		b.resetAt("swapped")
		return nil
	}
	if hadImage {
		if err := disks.Unmount(dir); err != nil {
			return err
		}
		b.resetAt("old unmounted")
		// A second name keeps the old image should the fresh one not mount.
		if err := os.Link(img, oldImg); err != nil {
			return err
		}
	}
	if err := os.Rename(freshImg, img); err != nil {
		return err
	}
	b.resetAt("swapped")
	if err := b.readyFolder(dir, old); err != nil {
		return err
	}
	b.resetAt("old moved")
	if err := disks.MountImage(img, dir); err != nil {
		// Back to the old image (or none), so finishReset puts the box
		// back; the fresh image goes with the sweep.
		if hadImage {
			_ = os.Rename(oldImg, img)
		} else {
			_ = os.Remove(img)
			_ = os.Remove(dir)
			_ = os.Rename(old, dir)
		}
		return err
	}
	b.resetAt("mounted")
	return nil
}

// readyFolder makes dir the empty folder an image is mounted on: a plain
// box's folder that holds files is moved aside to old first.
func (b resets) readyFolder(dir, old string) error {
	if disks.IsMounted(dir) {
		return nil
	}
	ents, err := os.ReadDir(dir)
	if err == nil && len(ents) > 0 {
		if err := os.Rename(dir, old); err != nil {
			return err
		}
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	return nil
}

// removeResetLeft removes what a reset no longer needs once it ended or
// was put back: the fresh folder (which holds the old files after a
// folder's swap) and image where they are left, and the old box. The
// disks' lock is taken only to unmount and remove the images.
func (b resets) removeResetLeft(rec resetRecord) {
	for _, f := range b.resetNames(rec) {
		if err := b.RemoveBoxFolder(f[0], f[1]); err != nil {
			b.log.Warn("local backend: what a reset left was not removed; the sweep removes it", "folder", f[0], "err", err)
		}
	}
}

// removeResetLeftLocked is removeResetLeft with the disks' lock held.
func (b resets) removeResetLeftLocked(rec resetRecord) {
	for _, f := range b.resetNames(rec) {
		err := disks.Unmount(f[0])
		if err == nil {
			if err = os.Remove(f[1]); errors.Is(err, fs.ErrNotExist) {
				err = nil
			}
		}
		if err == nil {
			err = os.RemoveAll(f[0])
		}
		if err != nil {
			b.log.Warn("local backend: what a reset left was not removed; the sweep removes it", "folder", f[0], "err", err)
		}
	}
}

// resetNames are the folders and images a reset makes beside the box:
// the fresh one, the old one, and the old folder a swap in two renames
// moves aside (exchange).
func (b resets) resetNames(rec resetRecord) [][2]string {
	fresh, freshImg := b.Path(store.DirBoxes, rec.Fresh), b.Path(disks.DirDisks, rec.Fresh+".img")
	old, oldImg := b.Path(store.DirBoxes, rec.Old), b.Path(disks.DirDisks, rec.Old+".img")
	return [][2]string{{fresh, freshImg}, {old, oldImg}, {fresh + ".swap", ""}}
}

// exchange swaps the folders a and b in one rename (RENAME_EXCHANGE); on
// a file system without it, b is moved to a and a to b in two renames, and
// finishReset ends a swap cut between them.
func exchange(a, b string) error {
	err := renameExchange(a, b)
	if err == nil || !unsupported(err) {
		return err
	}
	tmp := a + ".swap"
	if err := os.Rename(b, tmp); err != nil {
		return err
	}
	if err := os.Rename(a, b); err != nil {
		_ = os.Rename(tmp, b)
		return err
	}
	return os.Rename(tmp, a)
}
