package local

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/local/disks"
	"github.com/boxsnap/boxsnap/providers/local/state"
	"github.com/boxsnap/boxsnap/providers/local/store"
)

// resetSuffix ends the name of a reset's record beside the box's state
// file: state/<box>.reset.
const resetSuffix = ".reset"

// resetRecord is what a reset under way does to its box, written before
// its first change to the box and removed after its last (ResetGuest), so
// a reset killed in between is finished by whoever finds it.
type resetRecord struct {
	// Fresh names the fresh box in the store's boxes folder (and its
	// image, Fresh.img, in the disks folder); Old the name the old box is
	// moved to where it must be.
	Fresh string `json:"fresh"`
	Old   string `json:"old"`
	// Image says the fresh box is an image of its own; Ino is the fresh
	// image's inode, or the fresh folder's: the box's is that once the
	// swap is made.
	Image bool   `json:"image,omitempty"`
	Ino   uint64 `json:"ino"`
	// Command, and with SetRun the user, environment and limits, are how
	// the fresh box runs (the reset's spec).
	Command string              `json:"command,omitempty"`
	SetRun  bool                `json:"setRun,omitempty"`
	User    string              `json:"user,omitempty"`
	Env     map[string]string   `json:"env,omitempty"`
	Limits  providers.BoxLimits `json:"limits,omitempty"`
}

// apply changes st as the reset makes it: the last take, the parent, the
// stat cache, the fork's source and shared tree forgotten; the command,
// user, environment and limits the spec gives (else the box's own: a
// reset never runs it with the defaults in place of its template's
// bounds).
func (r resetRecord) apply(st *state.BoxState) {
	st.Last, st.Parent, st.StatCache, st.ForkedFrom, st.Lower = "", "", "", "", ""
	if r.Command != "" {
		st.Command = r.Command
	}
	if r.SetRun {
		st.User, st.Env, st.Limits = r.User, maps.Clone(r.Env), r.Limits
	}
}

func (b resets) resetRecordFile(box string) string {
	return b.Path(store.DirState, box+resetSuffix)
}

// writeResetRecord writes rec whole (its environment is the box's, as
// its state file holds it: the same folder, the same mode).
func (b resets) writeResetRecord(box string, rec resetRecord) error {
	data, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	if err := store.WriteFileAtomic(b.resetRecordFile(box), data, 0o600); err != nil {
		return err
	}
	if b.noSync {
		return nil
	}
	return store.SyncDir(b.Path(store.DirState))
}

// endReset changes the box's state as rec says, removes the stat cache
// and then the record, and puts the names on disk.
func (b resets) endReset(box string, rec resetRecord) error {
	if err := b.UpdateState(box, rec.apply); err != nil {
		return err
	}
	if err := os.Remove(b.StatCacheFile(box)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	b.resetAt("stated")
	if err := os.Remove(b.resetRecordFile(box)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if b.noSync {
		return nil
	}
	for _, d := range []string{store.DirBoxes, disks.DirDisks, store.DirState} {
		if err := store.SyncDir(b.Path(d)); err != nil {
			return fmt.Errorf("put the box's files on disk: %w", err)
		}
	}
	return nil
}

// finishReset finishes the reset of box a killed process left half done,
// if its record is there (ResetGuest): forward where the fresh box is in
// place, else back. It takes the disks' lock, so a reset still running
// holds it and is never touched.
func (b resets) finishReset(box string) error {
	if _, err := os.Lstat(b.resetRecordFile(box)); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	unlock, err := b.LockMounts()
	if err != nil {
		return err
	}
	defer unlock()
	return b.finishResetLocked(box)
}

// finishResets finishes every reset a killed process left half done.
func (b resets) finishResets() error {
	ents, err := os.ReadDir(b.Path(store.DirState))
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range ents {
		box, ok := strings.CutSuffix(e.Name(), resetSuffix)
		if !ok || store.CheckID("box", box) != nil {
			continue
		}
		if err := b.finishReset(box); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// finishResetLocked is finishReset with the disks' lock held.
func (b resets) finishResetLocked(box string) error {
	data, err := os.ReadFile(b.resetRecordFile(box))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("box %s's reset: %w", box, err)
	}
	var rec resetRecord
	if err := json.Unmarshal(data, &rec); err != nil {
		return fmt.Errorf("box %s's reset record: %w", box, err)
	}
	dir, img := b.Store.BoxDir(box), b.ImageFile(box)
	fresh, old, oldImg := b.Path(store.DirBoxes, rec.Fresh), b.Path(store.DirBoxes, rec.Old), b.Path(disks.DirDisks, rec.Old+".img")
	forward := false
	if rec.Image {
		forward = sameInode(img, rec.Ino)
	} else {
		forward = sameInode(dir, rec.Ino)
		if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) && sameInode(fresh, rec.Ino) {
			// Cut between a swap's two renames (exchange): the fresh
			// folder goes in.
			if err := os.Rename(fresh, dir); err != nil {
				return fmt.Errorf("box %s's reset: %w", box, err)
			}
			_ = os.Rename(fresh+".swap", fresh)
			forward = true
		}
	}
	if forward {
		if rec.Image {
			if err := b.readyFolder(dir, old); err != nil {
				return fmt.Errorf("box %s's reset: %w", box, err)
			}
			if !disks.IsMounted(dir) {
				if err := disks.MountImage(img, dir); err != nil {
					return fmt.Errorf("box %s's reset: %w", box, err)
				}
			}
		}
		if err := b.endReset(box, rec); err != nil {
			return fmt.Errorf("box %s's reset: %w", box, err)
		}
		b.log.Info("local backend: a reset cut short was finished: the box is fresh", "box", box)
	} else {
		// Back: the old image and folder where they were moved from.
		if _, err := os.Lstat(img); errors.Is(err, fs.ErrNotExist) {
			if _, err := os.Lstat(oldImg); err == nil {
				if err := os.Rename(oldImg, img); err != nil {
					return fmt.Errorf("box %s's reset: %w", box, err)
				}
			}
		}
		if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
			if err := os.Rename(old, dir); err != nil {
				return fmt.Errorf("box %s's reset: %w", box, err)
			}
		}
		if err := os.Remove(b.resetRecordFile(box)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("box %s's reset: %w", box, err)
		}
		b.log.Info("local backend: a reset cut short was undone: the box is as it was", "box", box)
	}
	b.removeResetLeftLocked(rec)
	return nil
}

// inodeOf is the inode of path, unless err is already set.
func inodeOf(path string, err error) (uint64, error) {
	if err != nil {
		return 0, err
	}
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		return 0, fmt.Errorf("stat %s: %w", path, err)
	}
	return st.Ino, nil
}

// sameInode says whether path is the file or folder of inode ino.
func sameInode(path string, ino uint64) bool {
	n, err := inodeOf(path, nil)
	return err == nil && n == ino
}

// renameExchange swaps the names a and b at once.
func renameExchange(a, b string) error {
	if err := unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE); err != nil {
		return &os.LinkError{Op: "exchange", Old: a, New: b, Err: err}
	}
	return nil
}

// unsupported says the file system has no RENAME_EXCHANGE.
func unsupported(err error) bool {
	return errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EOPNOTSUPP)
}

// mountAll finishes the resets killed processes left half done, then
// mounts every box's image that is not mounted (MountImages), as at
// boxsnap's start.
func (b resets) mountAll() {
	if err := b.finishResets(); err != nil {
		b.log.Error("local backend: a reset cut short could not be finished", "err", err)
	}
	b.MountImages()
}

// sweepCutShort removes what forks and resets a crash cut short left,
// for the sweep (which holds the store lock exclusive, so none is at
// work): the resets cut short mid-swap finished first, as their records
// say, then every folder, image and mount under a fork's or a reset's
// name. It answers the bytes the images held on the host.
func (b resets) sweepCutShort() (int64, error) {
	errFinish := b.finishResets()
	forks, errForks := b.SweepForks()
	resets, errResets := b.SweepResets()
	return forks + resets, errors.Join(errFinish, errForks, errResets)
}
