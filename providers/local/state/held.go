package state

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/boxsnap/boxsnap/providers/local/store"
)

// HeldBoxes lists the boxes this host's folder holds whose state file (or,
// with none, folder) was last changed before since: each box with a state
// file or a folder here, by its guest's reference, sorted. A box made here
// since is left out, as one a move makes here just before the move's
// admission records this host as its owner. A box
// moved to another host, or taken over there, is still listed here until
// its copy is released (the hosts' sweep of boxes another host owns);
// its snapshots are not boxes and stay where they are.
func (s *States) HeldBoxes(ctx context.Context, since time.Time) ([]string, error) {
	seen := map[string]bool{}
	for _, dir := range []string{store.DirState, store.DirBoxes} {
		entries, err := os.ReadDir(s.Path(dir))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("list the boxes held here: %w", err)
		}
		for _, e := range entries {
			box := e.Name()
			if dir == store.DirState {
				var ok bool
				if box, ok = strings.CutSuffix(box, ".json"); !ok {
					continue
				}
			} else if !e.IsDir() {
				continue
			}
			if _, ok := seen[box]; ok || store.CheckID("box", box) != nil {
				continue
			}
			fi, err := e.Info()
			if err != nil {
				continue // gone meanwhile
			}
			seen[box] = fi.ModTime().Before(since)
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	out := make([]string, 0, len(seen))
	for box, old := range seen {
		if old {
			out = append(out, box)
		}
	}
	slices.Sort(out)
	return out, nil
}
