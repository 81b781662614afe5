package docker

import (
	"sync"

	"github.com/boxsnap/boxsnap/providers/docker/changerecord"
	"github.com/boxsnap/boxsnap/providers/docker/hoststate"
)

// takeRecords holds each box's record by container ID, in this process,
// and (with Config.StateDir) in a file of each, read back after a restart
// (changerecord.SaveRecord): a box with neither (or a box a restore made
// anew) has none, and its first check answers unknown.
type takeRecords struct {
	mu sync.Mutex
	by map[string]*changerecord.ChangeRecord
	// read holds the containers whose record's file was read.
	read map[string]bool
	// graph is "yes" once the engine is known to keep images in its own
	// layer store, "no" when it keeps them in containerd's (whose load
	// wants every layer's content), "" before the first ask.
	graph string
	// uppers holds each container's layer folder on this host.
	uppers hoststate.Uppers
	// adopted holds the pauses killed takes left that this process took
	// on, until a take ends them.
	adopted hoststate.Adoptions
}

func (r *takeRecords) put(container string, rec *changerecord.ChangeRecord) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.by == nil {
		r.by = map[string]*changerecord.ChangeRecord{}
	}
	r.by[container] = rec
}
