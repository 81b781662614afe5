package qemu

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"github.com/boxsnap/boxsnap/providers"
)

// room reads the plan's storage: the file system with the least free room
// of the backend's folder, where a take's internal snapshot grows its
// box's qcow2, and the imports folder, where a release's held copies go
// (the same file system unless the folder is a mount of its own). The core
// stops a release whose held copies do not fit there, before it releases
// anything.
func (b heldCopies) room() (providers.Storage, error) {
	st := providers.Storage{Name: storageInternal, Type: "qcow2"}
	found := false
	for _, dir := range []string{b.cfg.Dir, b.importsDir()} {
		var s unix.Statfs_t
		if err := unix.Statfs(dir, &s); err != nil {
			if errors.Is(err, os.ErrNotExist) && dir != b.cfg.Dir {
				continue // made by the first import or held copy
			}
			return st, fmt.Errorf("read the room of %s: %w", dir, err)
		}
		free := int64(s.Bavail) * s.Bsize
		if found && free >= st.FreeBytes {
			continue
		}
		found = true
		st.FreeBytes = free
		if total := float64(s.Blocks) * float64(s.Bsize); total > 0 {
			st.PercentFull = 100 * (1 - float64(free)/total)
		}
	}
	return st, nil
}
