package providers

import "strings"

// HostsUnreachableError is what a listing answers when some of a backend's
// hosts did not answer and the others did (a Proxmox node cut off from its
// cluster): the listing beside it is complete for every host not named, so
// the reconcile marks only the named hosts' snapshots unavailable and may
// count absences on the others (a failed listing marks nothing).
type HostsUnreachableError struct {
	Hosts []string
}

func (e *HostsUnreachableError) Error() string {
	return strings.Join(e.Hosts, ", ") + ": " + ErrUnreachable.Error()
}

// Unwrap makes it an ErrUnreachable for callers that do not look closer.
func (e *HostsUnreachableError) Unwrap() error { return ErrUnreachable }
