package sweeps

import "github.com/boxsnap/boxsnap/app/snapshots"

// elsewhere reports whether a record of backend be on host is another
// host's to check: a local backend's listing, its boxes' folders and its
// storage are of this host's disk only, so a sweep here proves nothing of
// another host's snapshots and boxes: the reconcile must neither mark them
// lost nor their guests gone, and the room sweep must not free another
// host's snapshots for this host's full disk. A record with no host (made before hosts were recorded) and
// a process told no host are checked as before.
func (s *Sweeps) elsewhere(be snapshots.Backend, host string) bool {
	return be.Kind == "local" && s.host != "" && host != "" && host != s.host
}
