package providers

// SharedContent is a backend whose snapshots' content may be reachable from
// every host that shares boxsnap's database, so a box of it can be restored
// or forked on another host than the one that took its snapshot (a move, a
// takeover of a gone host's boxes). A backend whose boxes no host owns
// (reached over the network) need not answer it.
type SharedContent interface {
	// ContentShared reports whether every host reaches this backend's
	// snapshots' content now.
	ContentShared() bool
}
