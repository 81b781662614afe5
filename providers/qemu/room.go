package qemu

import (
	"errors"
	"os"

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
		r, err := providers.ReadRoom(dir)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) && dir != b.cfg.Dir {
				continue // made by the first import or held copy
			}
			return st, err
		}
		if found && r.Free >= st.FreeBytes {
			continue
		}
		found = true
		st.FreeBytes, st.PercentFull = r.Free, r.PercentFull()
	}
	return st, nil
}
