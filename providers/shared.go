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

// OneHost is a backend whose guests and their data only the host it runs on
// reaches: its own disk, or a daemon on a unix socket (the local backend,
// QEMU's libvirtd, a Docker engine on unix://). Each of its boxes is owned
// by the host that made it (or that listed it first, for a box made before
// boxes of such a backend had an owner): its operations run on that host's
// workers only, and no other host's sweeps judge it. A backend that does
// not answer it, or answers false, every host reaches alike (Proxmox's
// API, a Docker engine over tcp:// or ssh://).
type OneHost interface {
	// OneHost reports whether this backend's guests are this host's alone.
	OneHost() bool
}

// ThisHostOnly answers OneHost true: a backend whose guests are always
// this host's alone embeds it.
type ThisHostOnly struct{}

// OneHost reports that the backend's guests are this host's alone.
func (ThisHostOnly) OneHost() bool { return true }
