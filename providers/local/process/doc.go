// Package process runs the local backend's box processes on this host:
// Processes picks the user a box's command runs as (making boxsnap's own
// unprivileged user when it runs as root), wraps the command in its
// sandbox (bubblewrap, bwrap) and its bounds (prlimit), gives it a network
// of its own (pasta, network.go), and starts it in a cgroup of its own that
// holds whatever it runs: a cgroup v2 one frozen through cgroup.freeze, a
// cgroup v1 freezer one, or, where there is neither, its process group
// stopped with SIGSTOP. It also makes the data folder's parents passable to
// a box's user (MakeFolder, Passable).
//
// Package local keeps which box runs which process, and when; this package
// reaches only the host's /proc and cgroups and boxsnap's own folders by
// their paths, never a file inside a box. It imports only the standard
// library, golang.org/x/sys/unix, providers, providers/local/confined and
// providers/local/store; it must never import app/..., jobs, package local
// or another backend.
package process
