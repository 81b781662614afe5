package fork

import (
	"errors"
	"syscall"
)

// backendFailedWords say why the backend's fork failed: its own words,
// but for a disk that ran out of room, said as such, without the paths of
// the host's data folder the error names.
func backendFailedWords(err error) string {
	if errors.Is(err, syscall.ENOSPC) {
		return forkNoRoomWords
	}
	return err.Error()
}
