package state

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/local/store"
)

// States reads and writes the boxes' state files (state/<boxID>.json).
type States struct {
	*store.Store
	// Mu is the backend's lock, held while UpdateState reads, changes and
	// writes a state back.
	Mu *sync.Mutex
}

// BoxState is the small state file kept per box, outside its folder, so that
// a restart of boxsnap knows which boxes ran and what the last take was.
type BoxState struct {
	ID      string `json:"id"`
	Kind    string `json:"kind"`
	Command string `json:"command,omitempty"`
	// User, Env and Limits are how the command runs (BoxSpec's).
	User   string              `json:"user,omitempty"`
	Env    map[string]string   `json:"env,omitempty"`
	Limits providers.BoxLimits `json:"limits,omitempty"`
	// NoNetwork and Publish are the box's network (BoxSpec's).
	NoNetwork bool  `json:"noNetwork,omitempty"`
	Publish   []int `json:"publish,omitempty"`
	// Running is set by Start and cleared by Stop: what the box should be.
	Running bool `json:"running"`
	// Last is the snapshot most recently taken of the box: its manifest's
	// stat cache makes the next take read only what changed.
	Last string `json:"last,omitempty"`
	// Parent is the snapshot the box's files descend from now: the last take,
	// or the target of the last restore. A take records it as its parent.
	Parent string `json:"parent,omitempty"`
	// StatCache names the snapshot a restore brought the box to when the
	// restore left a stat cache (state/<boxID>.cache): that snapshot's
	// entries with the stat of the files as the restore left them, fresher
	// than Last's manifest. Empty after a take.
	StatCache string `json:"statCache,omitempty"`
	// ForkedFrom is the snapshot a fork was made from.
	ForkedFrom string `json:"forkedFrom,omitempty"`
	// Lower names the snapshot whose shared read-only tree the box's
	// folder lies over (package overlay): a sweep keeps that tree while a
	// box names it. Empty for a box that holds all its files.
	Lower string `json:"lower,omitempty"`
	// Owner names the boxsnap process that started the box's process last
	// (SetOwner); Proc is that process, for every boxsnap process on this
	// data folder to find (package local's owner.go).
	Owner string      `json:"owner,omitempty"`
	Proc  *ProcRecord `json:"proc,omitempty"`
	// DiskStop is set when boxsnap stopped the box by itself at its disk
	// bound (watchDisk); a start clears it.
	DiskStop *providers.DiskStop `json:"diskStop,omitempty"`
	// Carried is set on a box made to be restored from a snapshot of a
	// box that ran on another host (BoxSpec.Ran): no process runs, but
	// Runs says it does until a start or a stop clears it, so the restore
	// starts it.
	Carried bool `json:"carried,omitempty"`
}

// ReadState reads a box's state file: a box with none has a state of
// its ID alone.
func (b *States) ReadState(box string) (BoxState, error) {
	var st BoxState
	data, err := os.ReadFile(b.StateFile(box))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return BoxState{ID: box}, nil
		}
		return st, fmt.Errorf("read box %s's state: %w", box, err)
	}
	if err := json.Unmarshal(data, &st); err != nil {
		return st, fmt.Errorf("read box %s's state: %w", box, err)
	}
	return st, nil
}

// WriteState replaces the box's state file with st.
func (b *States) WriteState(st BoxState) error {
	data, err := json.Marshal(st)
	if err != nil {
		return err
	}
	return store.ReplaceFile(b.StateFile(st.ID), data, 0o600)
}

// UpdateState reads, changes and writes a box's state under the backend's lock.
func (b *States) UpdateState(box string, change func(*BoxState)) error {
	b.Mu.Lock()
	defer b.Mu.Unlock()
	st, err := b.ReadState(box)
	if err != nil {
		return err
	}
	change(&st)
	return b.WriteState(st)
}
