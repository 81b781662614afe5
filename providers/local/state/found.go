package state

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/boxsnap/boxsnap/providers/local/store"
)

// FoundFile is the file that marks the copy held here of a box released
// elsewhere as found (state/<boxID>.found, holding the time it was
// found): kept, stopped, until the person deletes it.
func (s *States) FoundFile(box string) string { return s.Path(store.DirState, box+".found") }

// FoundMarked says whether the copy of box held here is marked found.
func (s *States) FoundMarked(box string) (bool, error) {
	if err := store.CheckID("box", box); err != nil {
		return false, err
	}
	_, err := os.Stat(s.FoundFile(box))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read whether box %s's copy is marked found: %w", box, err)
	}
	return true, nil
}

// MarkFound marks the copy of box held here found, leaving its folder and
// state as they are, and answers its folder. The caller stops the box
// first: nothing starts a box marked stopped again.
func (s *States) MarkFound(box string) (string, error) {
	if err := store.CheckID("box", box); err != nil {
		return "", err
	}
	if err := store.ReplaceFile(s.FoundFile(box), []byte(time.Now().UTC().Format(time.RFC3339)+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("mark the copy of box %s found: %w", box, err)
	}
	return s.BoxDir(box), nil
}
