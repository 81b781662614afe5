package sweeps

import "github.com/boxsnap/boxsnap/app/snapshots"

// elsewhere reports whether a record of backend be on host is another
// host's to check: a local backend's listing and its boxes' folders are of
// this host's disk only, so a reconcile here proves nothing of another
// host's snapshots and boxes, and must neither mark them lost nor their
// guests gone. A record with no host (made before hosts were recorded) and
// a process told no host are checked as before.
func (s *Sweeps) elsewhere(be snapshots.Backend, host string) bool {
	return be.Kind == "local" && s.host != "" && host != "" && host != s.host
}
