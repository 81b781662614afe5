package hosts

import "slices"

// Owned is what the Hosts page says of which boxes belong to a host
// (OwnedWords), from this process's backends' own answers
// (snapshots.Backend.OneHost): the local backend's, and QEMU's and a
// Docker engine's on a unix socket, each one host's; Proxmox's, and a
// Docker engine's over tcp:// or ssh://, every host's alike.
func (h *Hosts) Owned() string {
	var one, every []string
	for _, be := range h.k.Backends() {
		list := &every
		if be.OneHost() {
			list = &one
		}
		if !slices.Contains(*list, be.Kind) {
			*list = append(*list, be.Kind)
		}
	}
	// The local backend first: every host has it.
	if i := slices.Index(one, "local"); i > 0 {
		one = slices.Insert(slices.Delete(one, i, i+1), 0, "local")
	}
	return OwnedWords(one, every)
}
