// Package owners reaches the box processes that several boxsnap processes
// on one data folder share: the box's lock (LockBox) held by whichever
// starts, stops or takes it over, and the ending (EndRecorded), pausing
// (PauseRecorded) and cleaning up (CleanCgroups) of a process another of
// them started, as the box's state file records it. It reaches only the
// store's state folder and the host's /proc and cgroups by their paths,
// never a file inside a box.
//
// It imports only the standard library, golang.org/x/sys/unix,
// providers/local/process, providers/local/state and
// providers/local/store; it must never import app/..., jobs, package local
// or another backend.
package owners
