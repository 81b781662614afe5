package docker

import (
	"context"
	"os"
	"path/filepath"
	"strings"
)

// A take with a state folder runs its volume's scans and reads in the
// volume's checker (checker.go), a copier container kept running for the
// volume's life, instead of a copier of its own made and removed at every
// take (that container's life cost 0.6 to 1 s of a take on a busy host).
// The per-take copier also marked a take at work until its tag: that mark
// is now an empty file of the state folder named for the snapshot, made
// before the take's first part and removed when the take ends (or by the
// snapshot's delete); a kill leaves it, as it left the copier, and the
// take's next try takes the snapshot again.

// takeFolder is the folder of the state folder holding the takes' marks.
const takeFolder = "takes"

// takeMark is the file of a take's mark, or "" where there is none: no
// state folder, or a snapshot ID that is not a plain name.
func (e *engine) takeMark(snap string) string {
	if e.cfg.StateDir == "" || snap == "" || len(snap) > 128 ||
		strings.Trim(snap, "abcdefghijklmnopqrstuvwxyz0123456789-_") != "" {
		return ""
	}
	return filepath.Join(e.cfg.StateDir, takeFolder, snap)
}

// markTake marks a take at work and answers what ends the mark; false
// where the take cannot be marked (it makes a copier of its own then).
func (e *engine) markTake(snap string) (func(), bool) {
	p := e.takeMark(snap)
	if p == "" {
		return nil, false
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return nil, false
	}
	if err := os.WriteFile(p, nil, 0o600); err != nil {
		return nil, false
	}
	return func() { _ = os.Remove(p) }, true
}

// takeMarked says whether a take of the snapshot is at work, or was cut
// short by a kill and is to be taken again.
func (e *engine) takeMarked(snap string) bool {
	p := e.takeMark(snap)
	if p == "" {
		return false
	}
	_, err := os.Stat(p)
	return err == nil
}

// unmarkTake removes a take's mark.
func (e *engine) unmarkTake(snap string) {
	if p := e.takeMark(snap); p != "" {
		_ = os.Remove(p)
	}
}

// ensureChecker starts the volume's checker where it is not running.
func (b incremental) ensureChecker(ctx context.Context, vol string) error {
	c, ok, err := b.inspect(ctx, checkerName(vol))
	if err != nil {
		return err
	}
	if ok && running(c) && !c.State.Paused {
		return nil
	}
	return b.startChecker(ctx, vol)
}
