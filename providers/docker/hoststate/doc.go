// Package hoststate is what the Docker backend keeps and reads on
// boxsnap's own host, beside the engine: the held files of its state
// folder (a file locked while a live take needs it, so that the next start
// knows what a killed take left: the takes' layer files, swept then), the
// marks of the takes at work, the freeze of a local box's cgroup (recorded
// before it is made, thawed at the next start if boxsnap was killed in
// it) and the record of an engine's pause, and a path's change time read
// in a container's layer folder.
//
// It talks to no engine. It imports only the standard library; it imports
// nothing of boxsnap, and must never import package docker or any other.
package hoststate
