package docker

import (
	"os"
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
	// adopted holds, by container, the record of a pause a killed take
	// left that this process took on, until a take ends it.
	adopted map[string]*os.File
}

// adoptPause says whether a paused box's pause is a killed take's, which
// the next take ends (hoststate.AdoptPause), keeping its record.
func (r *takeRecords) adoptPause(s hoststate.State, id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.adopted[id] != nil {
		return true
	}
	ours, rec := s.AdoptPause(id)
	if rec != nil {
		if r.adopted == nil {
			r.adopted = map[string]*os.File{}
		}
		r.adopted[id] = rec
	}
	return ours
}

// takeAdopted hands over the record of a pause this process took on.
func (r *takeRecords) takeAdopted(id string) *os.File {
	r.mu.Lock()
	defer r.mu.Unlock()
	rec := r.adopted[id]
	delete(r.adopted, id)
	return rec
}

func (r *takeRecords) put(container string, rec *changerecord.ChangeRecord) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.by == nil {
		r.by = map[string]*changerecord.ChangeRecord{}
	}
	r.by[container] = rec
}
